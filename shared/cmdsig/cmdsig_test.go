package cmdsig

import "testing"

// TestSignVerify: a signature holds for its subject and body and key only.
func TestSignVerify(t *testing.T) {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewKey()
	sig, _ := k.Sign("s.agent.a.task.assign", []byte(`{"term":3}`))
	if err := Verify(k.Public(), "s.agent.a.task.assign", []byte(`{"term":3}`), sig); err != nil {
		t.Fatalf("good signature refused: %v", err)
	}
	for _, tc := range []struct{ name, pub, subject, body, sig string }{
		{"another subject", k.Public(), "s.agent.b.task.assign", `{"term":3}`, sig},
		{"another body", k.Public(), "s.agent.a.task.assign", `{"term":4}`, sig},
		{"another key", other.Public(), "s.agent.a.task.assign", `{"term":3}`, sig},
		{"unsigned", k.Public(), "s.agent.a.task.assign", `{"term":3}`, ""},
		{"garbage signature", k.Public(), "s.agent.a.task.assign", `{"term":3}`, "bm90IGEgc2lnbmF0dXJl"},
		{"no key in the lease", "", "s.agent.a.task.assign", `{"term":3}`, sig},
		{"malformed key", "!!", "s.agent.a.task.assign", `{"term":3}`, sig},
	} {
		if err := Verify(tc.pub, tc.subject, []byte(tc.body), tc.sig); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
