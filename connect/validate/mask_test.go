package validate

import (
	"maps"
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

// secretConnector is a source whose one own key is a PASSWORD.
type secretConnector struct{ connect.SourceConnector }

func (secretConnector) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "db.password", Type: connect.TypePassword, Importance: connect.ImportanceHigh})
}

func (secretConnector) Validate(map[string]string) []connect.ConfigValue { return nil }

func TestMaskPasswords(t *testing.T) {
	reg, err := plugins.New(&connect.Plugin{Class: "com.example.SecretConnector", Kind: connect.KindSource, Version: "1",
		NewConnector: func() connect.Connector { return secretConnector{} }})
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{"connector.class": "com.example.SecretConnector", "db.password": "s3cr3t", "name": "n"}
	want := maps.Clone(props)
	want["db.password"] = "[hidden]"
	if got := MaskPasswords(reg, props); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	unknown := map[string]string{"connector.class": "NoSuch", "db.password": "s3cr3t"}
	if got := MaskPasswords(reg, unknown); !maps.Equal(got, unknown) {
		t.Fatalf("an unknown class was masked: %v", got)
	}
	// Validate output hides it too: ConfigValue renders a Password as [hidden].
	infos, _, err := Connector(reg, props)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range infos.Configs {
		if c.Value.Name == "db.password" && (c.Value.Value == nil || *c.Value.Value != "[hidden]") {
			t.Fatalf("validate shows db.password as %v", c.Value.Value)
		}
	}
}
