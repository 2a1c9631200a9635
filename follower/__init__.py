"""The page-wide follower: per-user numbered events, the websocket consumer, the JS module."""
