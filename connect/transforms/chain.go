// Package transforms holds Kafka Connect's single message transformations
// and predicates in Go, with Kafka's class names, config keys, defaults,
// messages and behaviour, and the chain a connector config's transforms=…
// builds from them. Sources run the chain after their task's poll and before
// the converters; sinks after the converters and before their task's put,
// as Kafka Connect orders them.
package transforms

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// Connector config keys of the chain.
const (
	TransformsConfig = "transforms"
	PredicatesConfig = "predicates"
	// The keys each transformation has beside its own (Kafka's
	// TransformationStage.PREDICATE_CONFIG and NEGATE_CONFIG).
	PredicateKey = "predicate"
	NegateKey    = "negate"
	typeKey      = "type"
)

// Lookup resolves a class name or alias to a plugin (a plugins.Registry).
type Lookup interface {
	Lookup(classOrAlias string) (*connect.Plugin, bool)
}

// Chain is a connector's transformations, in the order its transforms key
// lists them. A nil *Chain (a config without transformations) passes every
// record through.
type Chain struct {
	stages     []stage
	predicates []connect.Predicate
}

// stage is one transformation, applied when its predicate (if any) says so.
type stage struct {
	alias     string
	class     string
	t         connect.Transformation
	predicate connect.Predicate
	negate    bool
}

// StageError is a transformation that failed on a record: Kafka Connect's
// TRANSFORMATION stage, with the transformation's class.
type StageError struct {
	Alias, Class string
	Err          error
}

// Error implements error.
func (e *StageError) Error() string {
	return fmt.Sprintf("Executing stage 'TRANSFORMATION' with class '%s' (transformation %s): %v", e.Class, e.Alias, e.Err)
}

// Unwrap returns the transformation's error.
func (e *StageError) Unwrap() error { return e.Err }

// Build makes the chain a connector config names, configuring each
// transformation and predicate with its prefixed keys; nil when the config
// has no transformations. The config was validated when it was stored, so
// an error here is a plugin that refused its settings.
func Build(reg Lookup, conn map[string]string) (*Chain, error) {
	aliases := aliasList(conn[TransformsConfig])
	if len(aliases) == 0 {
		return nil, nil
	}
	c := &Chain{}
	preds := map[string]connect.Predicate{}
	for _, alias := range aliasList(conn[PredicatesConfig]) {
		p, err := newPredicate(reg, alias, prefixed(conn, PredicatesConfig+"."+alias+"."))
		if err != nil {
			c.Close()
			return nil, err
		}
		preds[alias] = p
		c.predicates = append(c.predicates, p)
	}
	for _, alias := range aliases {
		s, err := newStage(reg, alias, prefixed(conn, TransformsConfig+"."+alias+"."), preds)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.stages = append(c.stages, s)
	}
	return c, nil
}

// aliasList parses a list of aliases, as Kafka's LIST type does.
func aliasList(raw string) []string {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	var out []string
	for _, a := range connect.ParseList(raw) {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

// prefixed returns the keys of conn under prefix, without it.
func prefixed(conn map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range conn {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

func newPredicate(reg Lookup, alias string, props map[string]string) (connect.Predicate, error) {
	cls := connect.JavaTrim(props[typeKey])
	p, ok := reg.Lookup(cls)
	if !ok || p.NewPredicate == nil {
		return nil, fmt.Errorf("predicate %s: class %s is not a predicate Sluice has", alias, cls)
	}
	pred := p.NewPredicate()
	if err := pred.Configure(props); err != nil {
		return nil, fmt.Errorf("predicate %s (%s): %w", alias, p.Class, err)
	}
	return pred, nil
}

func newStage(reg Lookup, alias string, props map[string]string, preds map[string]connect.Predicate) (stage, error) {
	cls := connect.JavaTrim(props[typeKey])
	p, ok := reg.Lookup(cls)
	if !ok || p.NewTransformation == nil {
		return stage{}, fmt.Errorf("transformation %s: class %s is not a transformation Sluice has", alias, cls)
	}
	s := stage{alias: alias, class: p.Class}
	if name := connect.JavaTrim(props[PredicateKey]); name != "" {
		if s.predicate = preds[name]; s.predicate == nil {
			return stage{}, fmt.Errorf("transformation %s: predicate %s is not in %s", alias, name, PredicatesConfig)
		}
	}
	if raw, set := props[NegateKey]; set {
		negate, err := connect.ParseBool(TransformsConfig+"."+alias+"."+NegateKey, raw)
		if err != nil {
			return stage{}, err
		}
		s.negate = negate
	}
	// The implicit keys are the chain's, not the transformation's.
	delete(props, PredicateKey)
	delete(props, NegateKey)
	s.t = p.NewTransformation()
	if err := s.t.Configure(props); err != nil {
		return stage{}, fmt.Errorf("transformation %s (%s): %w", alias, p.Class, err)
	}
	return s, nil
}

// Apply runs rec through the chain: each transformation whose predicate
// (negated if so configured) holds, or that has none. It returns nil when
// a transformation dropped the record; an error is a *StageError.
func (c *Chain) Apply(rec *connect.TransformRecord) (*connect.TransformRecord, error) {
	if c == nil {
		return rec, nil
	}
	for _, s := range c.stages {
		if s.predicate != nil {
			ok, err := s.predicate.Test(rec)
			if err != nil {
				return nil, &StageError{Alias: s.alias, Class: s.class, Err: err}
			}
			if ok == s.negate {
				continue
			}
		}
		out, err := s.t.Apply(rec)
		if err != nil {
			return nil, &StageError{Alias: s.alias, Class: s.class, Err: err}
		}
		if out == nil {
			return nil, nil
		}
		rec = out
	}
	return rec, nil
}

// Len is the number of transformations.
func (c *Chain) Len() int {
	if c == nil {
		return 0
	}
	return len(c.stages)
}

// Close closes every transformation and predicate.
func (c *Chain) Close() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, s := range c.stages {
		errs = append(errs, s.t.Close())
	}
	for _, p := range c.predicates {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
