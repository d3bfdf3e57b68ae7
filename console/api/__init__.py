"""The REST API (Django REST framework) under /api/v1/."""
