package transforms

import (
	"regexp"
	"slices"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/javaregex"
)

// Class names of the predicates.
const (
	HasHeaderKeyClass      = "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"
	RecordIsTombstoneClass = "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"
	TopicNameMatchesClass  = "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
)

func hasHeaderKeyDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.TypeString, Required: true, Validator: connect.NonEmptyString{},
			Importance: connect.ImportanceMedium, Documentation: "The header name."})
}

// hasHeaderKey is Kafka's HasHeaderKey: the record has a header of the name.
type hasHeaderKey struct{ name string }

func (p *hasHeaderKey) Configure(props map[string]string) error {
	v, err := hasHeaderKeyDef().Parse(props)
	if err != nil {
		return err
	}
	p.name = v.String("name")
	return nil
}

func (p *hasHeaderKey) Test(r *connect.TransformRecord) (bool, error) {
	return slices.ContainsFunc(r.Headers, func(h connect.Header) bool { return h.Key == p.name }), nil
}

func (*hasHeaderKey) Close() error { return nil }

// recordIsTombstone is Kafka's RecordIsTombstone: the record's value is null.
type recordIsTombstone struct{}

func (recordIsTombstone) Configure(map[string]string) error { return nil }

func (recordIsTombstone) Test(r *connect.TransformRecord) (bool, error) { return r.Value == nil, nil }

func (recordIsTombstone) Close() error { return nil }

func topicNameMatchesDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "pattern", Type: connect.TypeString, Required: true,
			Validator:  connect.Composite{connect.NonEmptyString{}, regexValidator{}},
			Importance: connect.ImportanceMedium, Documentation: "A Java regular expression for matching against the name of a record's topic."})
}

// topicNameMatches is Kafka's TopicNameMatches: the pattern matches the
// record's whole topic.
type topicNameMatches struct{ re *regexp.Regexp }

func (p *topicNameMatches) Configure(props map[string]string) error {
	v, err := topicNameMatchesDef().Parse(props)
	if err != nil {
		return err
	}
	p.re, err = javaregex.Compile(v.String("pattern"))
	return err
}

func (p *topicNameMatches) Test(r *connect.TransformRecord) (bool, error) {
	return r.Topic != "" && p.re.MatchString(r.Topic), nil
}

func (*topicNameMatches) Close() error { return nil }
