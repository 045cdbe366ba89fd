# syntax=docker/dockerfile:1
# Build: docker build -t herald .
# Run:   docker run -p 8080:8080 -v herald-data:/data herald
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/herald ./cmd/herald

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data herald \
    && install -d -m 0700 -o herald /data
COPY --from=build /out/herald /usr/local/bin/herald
USER herald
VOLUME /data
EXPOSE 8080
ENV HERALD_DATA=/data HERALD_LISTEN=0.0.0.0:8080
ENTRYPOINT ["herald"]
CMD ["serve"]
