package transforms

import (
	"regexp"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/javaregex"
)

// Class names of the routers.
const (
	RegexRouterClass     = "org.apache.kafka.connect.transforms.RegexRouter"
	TimestampRouterClass = "org.apache.kafka.connect.transforms.TimestampRouter"
)

func regexRouterDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "regex", Type: connect.TypeString, Required: true, Validator: regexValidator{},
			Importance: connect.ImportanceHigh, Documentation: "Regular expression to use for matching."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Required: true,
			Importance: connect.ImportanceHigh, Documentation: "Replacement string."})
}

// regexRouter is Kafka's RegexRouter: a topic the regex matches whole is
// renamed to the replacement, in which $1… name the regex's groups.
type regexRouter struct {
	re          *regexp.Regexp
	replacement string
}

func (t *regexRouter) Configure(props map[string]string) error {
	v, err := regexRouterDef().Parse(props)
	if err != nil {
		return err
	}
	if t.re, err = javaregex.Compile(v.String("regex")); err != nil {
		return err
	}
	t.replacement = javaReplacement(v.String("replacement"))
	return nil
}

func (t *regexRouter) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	m := t.re.FindStringSubmatchIndex(r.Topic)
	if m == nil {
		return r, nil
	}
	out := *r
	out.Topic = string(t.re.ExpandString(nil, t.replacement, r.Topic, m))
	return &out, nil
}

func (*regexRouter) Close() error { return nil }

// javaReplacement turns a Java replacement string ($n and ${name} name
// groups, a backslash quotes the next character) into Go's Expand template.
func javaReplacement(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
		case c == '$' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			b.WriteString("${" + s[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// regexValidator is Kafka's RegexValidator ("valid regex").
type regexValidator struct{}

func (regexValidator) EnsureValid(name string, value any) error {
	if value == nil {
		// Kafka compiles the null too, and reports Java's exception.
		return connect.InvalidValue(name, nil, `Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null`)
	}
	s, ok := value.(string)
	if !ok {
		return nil
	}
	if _, err := regexp.Compile(s); err != nil {
		return connect.InvalidValue(name, s, "Invalid regex: "+err.Error())
	}
	return nil
}

func timestampRouterDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic.format", Type: connect.TypeString, Default: "${topic}-${timestamp}",
			Importance: connect.ImportanceHigh, Documentation: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
		Define(connect.ConfigKey{Name: "timestamp.format", Type: connect.TypeString, Default: "yyyyMMdd",
			Importance: connect.ImportanceHigh, Documentation: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})
}

// timestampRouter is Kafka's TimestampRouter: the topic becomes
// topic.format with ${topic} and ${timestamp} (the record's timestamp in
// UTC, as timestamp.format) filled in.
type timestampRouter struct {
	topicFormat string
	format      *dateFormat
}

func (t *timestampRouter) Configure(props map[string]string) error {
	v, err := timestampRouterDef().Parse(props)
	if err != nil {
		return err
	}
	t.topicFormat = v.String("topic.format")
	t.format, err = parseDateFormat(v.String("timestamp.format"))
	return err
}

func (t *timestampRouter) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	if r.Timestamp.IsZero() {
		return nil, dataErrorf("Timestamp missing on record: %s", describe(r))
	}
	out := *r
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	out.Topic = strings.ReplaceAll(topic, "${timestamp}", t.format.format(r.Timestamp))
	return &out, nil
}

func (*timestampRouter) Close() error { return nil }
