"""Celery workers: matches under deadlines, tournaments, leagues."""
