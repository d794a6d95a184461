"""The Slack side of cypherbot: Bolt app, listeners, rendering, the Slack API emulator, the CLI and settings."""
