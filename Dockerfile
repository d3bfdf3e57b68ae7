FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY console ./console
COPY frontier ./frontier
RUN pip install --no-cache-dir .
COPY . .
EXPOSE 8000
CMD ["python", "manage.py", "runserver", "--insecure", "--noreload", "0.0.0.0:8000"]
