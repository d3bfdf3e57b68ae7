"""The crawl console: the Django project and the operator's side."""
