"""The Starlette web app and JSON API."""
