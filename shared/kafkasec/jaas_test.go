package kafkasec

import (
	"errors"
	"strings"
	"testing"
)

func TestFromJAAS(t *testing.T) {
	scramJAAS := `org.apache.kafka.common.security.scram.ScramLoginModule required username="team-a" password="s3cr et";`
	for mech, want := range map[string]string{"SCRAM-SHA-512": "SCRAM-SHA-512", "scram-sha-256": "SCRAM-SHA-256"} {
		m, user, err := FromJAAS(mech, scramJAAS)
		if err != nil || m.Name() != want || user != "team-a" {
			t.Errorf("%s: %v %q %v", mech, m, user, err)
		}
	}
	m, user, err := FromJAAS("PLAIN", `org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password=pw;`)
	if err != nil || m.Name() != "PLAIN" || user != "bob" {
		t.Errorf("PLAIN: %v %q %v", m, user, err)
	}
	for _, tc := range []struct{ mech, jaas, want string }{
		{"SCRAM-SHA-512", `org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="secretvalue"`, "sasl.jaas.config must be"},
		{"SCRAM-SHA-512", `org.apache.kafka.common.security.scram.ScramLoginModule maybe username="a" password="secretvalue";`, "sasl.jaas.config must be"},
		{"SCRAM-SHA-512", `org.apache.kafka.common.security.scram.ScramLoginModule required username="a";`, "needs a username and a password"},
		{"PLAIN", scramJAAS, "PLAIN needs org.apache.kafka.common.security.plain.PlainLoginModule"},
		{"GSSAPI", scramJAAS, `sasl.mechanism "GSSAPI" is not supported`},
		{"", scramJAAS, "is not supported"},
	} {
		_, _, err := FromJAAS(tc.mech, tc.jaas)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.mech, tc.jaas, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "secretvalue") || strings.Contains(err.Error(), "s3cr")) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if _, _, err := FromJAAS("PLAIN", "nonsense"); !errors.Is(err, ErrJAAS) {
		t.Errorf("nonsense: %v", err)
	}
}
