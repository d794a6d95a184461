"""The played parts the playground, the tests and the benchmarks run the real bot against: a
scripted chat model (the LLM), a rig of the real Slack app on the Slack emulator, a bot
instance in its own process, and a throwaway PostgreSQL cluster. Nothing here is used by the
bot in production."""
