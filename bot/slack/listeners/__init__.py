"""Bolt listeners, one small module per kind of Slack event; wired in `bot.slack.app.register_listeners`."""
