"""The Slack app: Bolt app and listeners, delivery of work after the ack, answering one
question, progress and streaming, Block Kit rendering, the process-wide Slack throttle, and
HTTP mode's server and request gate."""
