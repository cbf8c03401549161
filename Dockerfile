# One image for web, worker and beat. The worker needs the harness CLIs, so Node.js and the
# pinned CLIs from package.json are installed here too; openssh-client brings `ssh-keygen`, which
# checks every SSH sign-in (motion_runner/people/signin.py) — without it nobody gets full tools.
# tests/motion_runner/site/test_image.py holds the install list to what the code calls.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MOTION_RUNNER_DATA_DIR=/app/var STATIC_ROOT=/app/staticfiles
# var/ (the embedded cache, sign-in passes, typed words, the ingest spool) is a named volume in
# docker-compose.yml, so it outlives a container; the static files are the image's own, outside it,
# so a new image's are served, never an old volume's.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm git ripgrep openssh-client \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt package.json package-lock.json ./
RUN pip install --no-cache-dir -r requirements.txt \
    && npm ci --no-audit --no-fund --loglevel=error
COPY . .
RUN DEBUG=1 python manage.py collectstatic --noinput
RUN useradd --create-home runner && mkdir -p /app/var /workspaces && chown -R runner /app/var /workspaces
USER runner
