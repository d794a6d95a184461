// Slack mrkdwn and Block Kit as DOM nodes. Text only ever goes in through textContent, so
// nothing the bot, the model or the database wrote can become markup on this page.
(() => {
"use strict";

const EMOJI = {
  "+1": "👍", thumbsup: "👍", "-1": "👎", thumbsdown: "👎", white_check_mark: "✅",
  warning: "⚠️", x: "❌", mag: "🔍", bulb: "💡", tada: "🎉", wave: "👋", eyes: "👀",
  hourglass_flowing_sand: "⏳", hourglass: "⌛", robot_face: "🤖", memo: "📝", bar_chart: "📊",
  heavy_check_mark: "✔️", question: "❓", information_source: "ℹ️", rocket: "🚀",
  thinking_face: "🤔", pray: "🙏", sparkles: "✨", link: "🔗", paperclip: "📎",
};

function emojiFor(name) {
  const base = name.split("::")[0];
  return EMOJI[base] || null;
}

function unescapeSlack(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// `code`, <links|mentions>, :emoji:, and *bold* _italic_ ~strike~ (which may nest).
const TOKEN = /`([^`\n]+)`|<([^<>\n]+)>|:([a-z0-9_+'\-]+(?:::skin-tone-\d)?):|(?<![\w*_~])([*_~])(?=\S)([^\n]*?[^\s])\4(?![\w*_~])/g;

function appendText(parent, text) {
  const lines = unescapeSlack(text).split("\n");
  lines.forEach((line, i) => {
    if (i > 0) parent.append(el("br"));
    if (line) parent.append(document.createTextNode(line));
  });
}

function link(inner, users) {
  const [target, label] = inner.split("|", 2);
  if (target.startsWith("@")) {
    const id = target.slice(1);
    return el("span", { class: "mention", text: "@" + (label || users[id] || id) });
  }
  if (target.startsWith("#")) {
    return el("span", { class: "mention", text: "#" + (label || target.slice(1)) });
  }
  if (target.startsWith("!")) {
    const name = target.slice(1).split("^")[0];
    return el("span", { class: "mention broadcast", text: "@" + (label || name) });
  }
  if (/^(https?:|mailto:)/i.test(target)) {
    return el("a", { href: unescapeSlack(target), target: "_blank", rel: "noopener noreferrer" },
      unescapeSlack(label || target));
  }
  return document.createTextNode("<" + unescapeSlack(inner) + ">");
}

function inline(parent, text, users) {
  let last = 0;
  // matchAll works on its own copy of the regex, so the recursion below cannot disturb it.
  for (const match of text.matchAll(TOKEN)) {
    appendText(parent, text.slice(last, match.index));
    last = match.index + match[0].length;
    if (match[1] !== undefined) {
      parent.append(el("code", { text: unescapeSlack(match[1]) }));
    } else if (match[2] !== undefined) {
      parent.append(link(match[2], users));
    } else if (match[3] !== undefined) {
      const emoji = emojiFor(match[3]);
      parent.append(emoji ? el("span", { class: "emoji", role: "img", "aria-label": match[3], text: emoji })
        : document.createTextNode(":" + match[3] + ":"));
    } else {
      const tag = { "*": "strong", _: "em", "~": "s" }[match[4]];
      const node = el(tag);
      inline(node, match[5], users);
      parent.append(node);
    }
  }
  appendText(parent, text.slice(last));
}

// Slack mrkdwn → a fragment: ``` code blocks, "&gt; " quotes, inline formatting.
function mrkdwn(text, users) {
  const out = document.createDocumentFragment();
  const parts = String(text || "").split("```");
  parts.forEach((part, i) => {
    if (i % 2 === 1 && i < parts.length - 1) {
      const code = part.replace(/^\n/, "").replace(/\n$/, "");
      out.append(el("pre", { class: "code", tabindex: "0" }, el("code", { text: unescapeSlack(code) })));
      return;
    }
    if (i % 2 === 1) part = "```" + part; // an unclosed fence is plain text
    const trimmed = part.replace(/^\n+/, "").replace(/\n+$/, "");
    if (!trimmed) return;
    let paragraph = null;
    for (const line of trimmed.split("\n")) {
      if (line.startsWith("&gt; ") || line === "&gt;") {
        const quote = el("blockquote");
        inline(quote, line.slice(5), users);
        out.append(quote);
        paragraph = null;
        continue;
      }
      if (!paragraph) {
        paragraph = el("p");
        out.append(paragraph);
      } else {
        paragraph.append(el("br"));
      }
      inline(paragraph, line, users);
    }
  });
  return out;
}

function textObject(obj, users) {
  if (!obj) return document.createDocumentFragment();
  if (obj.type === "mrkdwn") return mrkdwn(obj.text, users);
  const span = el("span");
  appendText(span, obj.text || "");
  return span;
}

function button(element, onButton) {
  const label = element.text ? unescapeSlack(element.text.text || "") : "Button";
  if (element.url) {
    return el("a", { class: "block-button", href: element.url, target: "_blank", rel: "noopener noreferrer" }, label);
  }
  const style = element.style ? " " + element.style : "";
  return el("button", { type: "button", class: "block-button" + style, onclick: () => onButton(element) }, label);
}

function accessory(element, users, onButton) {
  if (!element) return null;
  if (element.type === "button") return button(element, onButton);
  if (element.type === "image") return el("img", { src: element.image_url, alt: element.alt_text || "" });
  return null;
}

// Block Kit → DOM; unknown blocks are skipped (their message's text is the fallback).
function blocks(list, users, onButton) {
  const out = el("div", { class: "blocks" });
  for (const block of list || []) {
    switch (block.type) {
      case "section": {
        const node = el("div", { class: "block section" });
        const body = el("div", { class: "section-text" }, textObject(block.text, users));
        node.append(body);
        if (block.fields) {
          node.append(el("div", { class: "fields" },
            ...block.fields.map((f) => el("div", { class: "field" }, textObject(f, users)))));
        }
        const side = accessory(block.accessory, users, onButton);
        if (side) node.append(el("div", { class: "accessory" }, side));
        out.append(node);
        break;
      }
      case "context":
        out.append(el("div", { class: "block context" }, ...(block.elements || []).map((e) =>
          e.type === "image" ? el("img", { src: e.image_url, alt: e.alt_text || "", class: "context-image" })
            : el("span", { class: "context-item" }, textObject(e, users)))));
        break;
      case "markdown": // a streamed answer's text (chat.startStream … stopStream)
        out.append(el("div", { class: "block section" },
          el("div", { class: "section-text" }, mrkdwn(String(block.text || "").replace(/\*\*(.+?)\*\*/g, "*$1*"), users))));
        break;
      case "context_actions": // Slack's feedback buttons under an AI answer
        out.append(el("div", { class: "block actions feedback" }, ...(block.elements || [])
          .filter((e) => e.type === "feedback_buttons")
          .flatMap((e) => [["positive_button", "👍 "], ["negative_button", "👎 "]].map(([key, icon]) => {
            const b = e[key] || {};
            return el("button", {
              type: "button", class: "block-button feedback-button",
              "aria-label": b.accessibility_label || (b.text && b.text.text) || key,
              onclick: () => onButton({ action_id: e.action_id, value: b.value }),
            }, icon + unescapeSlack((b.text && b.text.text) || ""));
          }))));
        break;
      case "header":
        out.append(el("h3", { class: "block header" }, textObject(block.text, users)));
        break;
      case "divider":
        out.append(el("hr", { class: "block divider" }));
        break;
      case "actions":
        out.append(el("div", { class: "block actions" },
          ...(block.elements || []).filter((e) => e.type === "button").map((e) => button(e, onButton))));
        break;
      case "image":
        out.append(el("img", { class: "block image", src: block.image_url, alt: block.alt_text || "" }));
        break;
      default:
        break;
    }
  }
  return out;
}

window.Mrkdwn = { el, mrkdwn, blocks, emojiFor, unescapeSlack };
})();
