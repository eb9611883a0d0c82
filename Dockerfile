# One image for every role (bee, elf, mayor, node, monitor); docker-compose.yml picks the entry point.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY shared ./shared
COPY services ./services
RUN pip install . && useradd --create-home --uid 1000 mutexlab && mkdir -p /traces \
    && chown mutexlab /traces

USER mutexlab
CMD ["python", "services/monitor/main.py"]
