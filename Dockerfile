# One image for web, worker and beat. The worker needs the harness CLIs, so Node.js and the
# pinned CLIs from package.json are installed here too.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm git ripgrep \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt package.json package-lock.json ./
RUN pip install --no-cache-dir -r requirements.txt \
    && npm ci --no-audit --no-fund --loglevel=error
COPY . .
RUN DEBUG=1 python manage.py collectstatic --noinput
RUN useradd --create-home runner && mkdir -p /app/var && chown -R runner /app/var
USER runner
