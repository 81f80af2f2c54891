"""The local QStash's delivery side: publishing, the delivery engine (retries, backoff, quotas,
signatures), schedules and their cron, and the routes that serve them."""
