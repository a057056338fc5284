#!/usr/bin/env bash
# Generate the test broker's TLS material and SCRAM user into DIR (kafka-up.sh
# calls this with KAFKA_RUN_DIR/security before formatting the log dir):
#
#   ca.pem, ca-key.pem          a CA made for this run (valid 30 days)
#   broker.p12                  the broker's key and certificate (SAN 127.0.0.1,
#                               localhost), signed by the CA, PKCS12
#   truststore.p12              the CA, for the mTLS listener to verify clients
#   client.pem, client-key.pem  a client certificate (CN=sluice-client) signed
#                               by the CA, for the mTLS listener
#   store.password              the password of both PKCS12 stores
#   sasl.username               the SCRAM-SHA-512 user (sluice)
#   sasl.password               its password (random, one line)
#   sasl_ssl.env, mtls.env      the Sluice flags for each listener, one
#                               flag=value a line (see README.md)
#
# Usage: kafka-certs.sh DIR SASL_SSL_ADDR MTLS_ADDR
# Needs openssl and keytool (from the JDK that runs the broker).
set -euo pipefail

dir=$1
die() { echo "kafka-certs: $*" >&2; exit 1; }
command -v openssl >/dev/null || die "openssl not found (needed to generate the test CA and certificates)"
keytool=keytool
if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/keytool ]]; then keytool=$JAVA_HOME/bin/keytool; fi
command -v "$keytool" >/dev/null || die "keytool not found (it comes with the JDK)"

mkdir -p "$dir"
cd "$dir"
umask 077
# What the tools say goes here, and is shown when a step fails.
log=$dir/openssl.log
: >"$log"
trap 'echo "kafka-certs: a step failed; what the tools said:" >&2; cat "$log" >&2' ERR
# RSA keys: every JDK and Go accept them in PKCS12 and PEM.
key() { openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>>"$log"; }
# sign NAME SUBJECT EXTENSIONS: a certificate for NAME-key.pem signed by the CA.
sign() {
	openssl req -new -key "$1-key.pem" -subj "$2" -out "$1.csr"
	openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 30 \
		-extfile <(printf '%s\n' "$3") -out "$1.pem" 2>>"$log"
	rm -f "$1.csr"
}

key ca-key.pem
openssl req -x509 -new -key ca-key.pem -subj "/CN=sluice-test-ca" -days 30 \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.pem
key broker-key.pem
sign broker "/CN=localhost" "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
key client-key.pem
sign client "/CN=sluice-client" "extendedKeyUsage=clientAuth"

openssl rand -hex 16 >store.password
openssl pkcs12 -export -in broker.pem -inkey broker-key.pem -certfile ca.pem -name broker \
	-passout "file:store.password" -out broker.p12
rm -f truststore.p12
"$keytool" -importcert -noprompt -alias ca -file ca.pem -keystore truststore.p12 -storetype PKCS12 \
	-storepass "$(<store.password)" >>"$log" 2>&1 || die "keytool could not write truststore.p12"

echo sluice >sasl.username
openssl rand -hex 16 >sasl.password

cat >sasl_ssl.env <<ENV
kafka=$2
kafka-tls-ca=$dir/ca.pem
kafka-sasl-mechanism=SCRAM-SHA-512
kafka-sasl-username=$(<sasl.username)
kafka-sasl-password-file=$dir/sasl.password
ENV
cat >mtls.env <<ENV
kafka=$3
kafka-tls-ca=$dir/ca.pem
kafka-tls-cert=$dir/client.pem
kafka-tls-key=$dir/client-key.pem
ENV
# Readable by the tests (the same user); nothing here is a real secret.
chmod 0644 ./*
