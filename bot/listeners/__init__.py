"""Bolt listeners, one small module per kind of Slack event; wired in `bot.app.register_listeners`."""
