package connect

import (
	"maps"
	"testing"
)

func TestMaskPasswords(t *testing.T) {
	def := NewConfigDef().
		Define(ConfigKey{Name: "db.password", Type: TypePassword, Importance: ImportanceHigh}).
		Define(ConfigKey{Name: "db.user", Type: TypeString, Importance: ImportanceHigh})
	in := map[string]string{"db.password": "s3cr3t", "db.user": "alice", "other": "x"}
	got := MaskPasswords(def, in)
	want := map[string]string{"db.password": "[hidden]", "db.user": "alice", "other": "x"}
	if !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if in["db.password"] != "s3cr3t" {
		t.Fatal("MaskPasswords changed its input")
	}
	if got := MaskPasswords(nil, in); !maps.Equal(got, in) {
		t.Fatalf("a nil def masked %v", got)
	}
	if Password("s3cr3t").String() != Hidden {
		t.Fatal("Password.String leaks")
	}
}
