package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Lookup finds, for a console session, the auth file's principal named
// name that signed in via basic or token, as the file stands now, and the
// fingerprint of its entry. ok is false when the file no longer has such
// a principal. A session keeps the fingerprint it was issued with: a
// changed password, token or grant changes it, and so ends the session.
func (a *Authenticator) Lookup(via, name string) (p *Principal, fingerprint string, ok bool) {
	var e *Entry
	t := a.file.Load()
	switch via {
	case ViaBasic:
		e = t.users[name]
	case ViaToken:
		for _, t := range t.tokens {
			if t.Name == name {
				e = t
				break
			}
		}
	}
	if e == nil {
		return nil, "", false
	}
	return e.principal(via), e.fingerprint(via), true
}

// fingerprint is a digest of what the entry lets its holder do and prove:
// the credential's hash and the grants. It is no secret (a digest of
// hashes), but it is only ever sent inside a signed session.
func (e *Entry) fingerprint(via string) string {
	grants, _ := json.Marshal(e.Grants) // Grants always marshal
	h := sha256.New()
	for _, part := range [][]byte{[]byte(via), []byte(e.Name), e.PasswordHash, []byte(e.TokenHash), grants} {
		h.Write([]byte{byte(len(part) >> 8), byte(len(part))})
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Fingerprint is the fingerprint of what authenticated p, as it was when
// it did: its auth-file entry's (see Lookup), or for a JWT the JWT
// settings' (JWTFingerprint); "" for a forwarded identity. A console
// session keeps it, taken from the same look-up that checked the
// credentials, so that a change racing the sign-in still ends it.
func (p *Principal) Fingerprint() string {
	switch {
	case p.entry != nil:
		return p.entry.fingerprint(p.Via)
	case p.jwtConfig != "":
		return p.jwtConfig
	}
	return ""
}

// JWTFingerprint is a digest of the JWT settings (JWKS, issuer, audience,
// roles claim); "" when JWTs are not taken. A JWT's console session ends
// when the coordinator verifying it takes JWTs no more, or under other
// settings.
func (a *Authenticator) JWTFingerprint() string {
	if a.jwt == nil {
		return ""
	}
	return a.jwt.fingerprint
}

// fingerprint is a digest of the settings a JWT is verified under.
func (c JWTConfig) fingerprint() string {
	h := sha256.New()
	for _, part := range []string{c.JWKS, c.Issuer, c.Audience, c.RolesClaim} {
		h.Write([]byte{byte(len(part) >> 8), byte(len(part))})
		h.Write([]byte(part))
	}
	return "jwt:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Expires is when the credential p was authenticated with stops being
// valid: a JWT's exp; zero for credentials that do not expire.
func (p *Principal) Expires() time.Time { return p.expires }
