# The sluice image that deploy/k8s runs: one static binary on an empty base,
# run as a non-root user. From the repository root:
#   docker build -t sluice:latest .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0: a static binary, which needs no libc in the image.
# GOWORK=off: the tests module of go.work is not part of the binary.
# The commit is stamped from .git when the build context has it.
RUN CGO_ENABLED=0 GOWORK=off go build -trimpath -o /out/sluice ./cmd/sluice

FROM scratch
# CA roots for TLS to Kafka and NATS.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/sluice /sluice
# A numeric uid:gid needs no /etc/passwd; 65532 is distroless' "nonroot".
USER 65532:65532
EXPOSE 8083
ENTRYPOINT ["/sluice"]
