package connect

import (
	"fmt"
	"slices"
)

// ConfigType is the type of a config key, spelled as Kafka's
// ConfigDef.Type (the REST API shows these names).
type ConfigType string

// The config types of Kafka's ConfigDef. Parsed values have these Go types:
// BOOLEAN bool, STRING string, INT int32, SHORT int16, LONG int64, DOUBLE
// float64, LIST []string, CLASS Class, PASSWORD Password.
const (
	TypeBoolean  ConfigType = "BOOLEAN"
	TypeString   ConfigType = "STRING"
	TypeInt      ConfigType = "INT"
	TypeShort    ConfigType = "SHORT"
	TypeLong     ConfigType = "LONG"
	TypeDouble   ConfigType = "DOUBLE"
	TypeList     ConfigType = "LIST"
	TypeClass    ConfigType = "CLASS"
	TypePassword ConfigType = "PASSWORD"
)

// Importance says how much a user should care about a key.
type Importance string

// Importance levels, as Kafka spells them.
const (
	ImportanceHigh   Importance = "HIGH"
	ImportanceMedium Importance = "MEDIUM"
	ImportanceLow    Importance = "LOW"
)

// Width is a UI hint for how wide a key's input should be.
type Width string

// Widths, as Kafka spells them.
const (
	WidthNone   Width = "NONE"
	WidthShort  Width = "SHORT"
	WidthMedium Width = "MEDIUM"
	WidthLong   Width = "LONG"
)

// Class is a parsed CLASS value: the plugin's full class name. Kafka holds a
// java.lang.Class here; Sluice has no classes, so a ConfigDef's ClassResolver
// maps names and aliases to the canonical name instead.
type Class string

// Password is a parsed PASSWORD value. Its String is "[hidden]", as Kafka's
// Password.toString, so it never leaks into messages or validate results.
type Password string

// String hides the password.
func (Password) String() string { return Hidden }

// Value returns the password itself.
func (p Password) Value() string { return string(p) }

// Validator checks one parsed value (nil when the key is unset and has a nil
// default, or when parsing failed). Its error's text becomes the ConfigValue
// error as is, so it should be a *ConfigError or carry Kafka's wording.
type Validator interface {
	EnsureValid(name string, value any) error
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(name string, value any) error

// EnsureValid calls f.
func (f ValidatorFunc) EnsureValid(name string, value any) error { return f(name, value) }

// Recommender gives the recommended values and visibility of a key from the
// parsed values of all keys (Kafka's ConfigDef.Recommender).
type Recommender interface {
	ValidValues(name string, parsed map[string]any) []any
	Visible(name string, parsed map[string]any) bool
}

// ConfigKey defines one config key.
type ConfigKey struct {
	Name string
	Type ConfigType
	// Required means the key has no default (Kafka's NO_DEFAULT_VALUE);
	// Default is then ignored.
	Required bool
	// Default is the default value: nil, a value of the parsed Go type, or a
	// string that Define parses as if it had been configured.
	Default       any
	Validator     Validator
	Importance    Importance
	Documentation string
	// Group is the key's group; "" means none (null in REST).
	Group string
	// OrderInGroup is the key's position in its group. A key without a group
	// and an order of 0 gets -1, as Kafka's short define() gives it.
	OrderInGroup int
	// Width defaults to NONE and DisplayName to the key's name, as in Kafka.
	Width       Width
	DisplayName string
	Dependents  []string
	Recommender Recommender
}

// DefaultString is the default as the REST API shows it: nil for a required
// key or a nil default.
func (k *ConfigKey) DefaultString() *string {
	if k.Required {
		return nil
	}
	return ConvertToString(k.Default, k.Type)
}

// ConfigDef is a set of config keys in definition order (Kafka's ConfigDef).
type ConfigDef struct {
	keys   []*ConfigKey
	index  map[string]int
	groups []string
	// ResolveClass maps a CLASS value (a full name or an alias) to the
	// canonical class name; false means no such class. Nil accepts any name
	// as is.
	ResolveClass func(name string) (string, bool)
}

// NewConfigDef returns an empty ConfigDef.
func NewConfigDef() *ConfigDef {
	return &ConfigDef{index: map[string]int{}}
}

// Copy returns a ConfigDef with the same keys, groups and class resolver;
// defining more keys on the copy leaves d alone.
func (d *ConfigDef) Copy() *ConfigDef {
	c := NewConfigDef()
	c.ResolveClass = d.ResolveClass
	for _, k := range d.keys {
		kc := *k
		c.add(&kc)
	}
	c.groups = slices.Clone(d.groups)
	return c
}

// Define adds a key and returns d, so definitions chain. Defining a name twice
// or giving a default that does not parse is a programming error and panics,
// as Kafka throws from its static initialisers.
func (d *ConfigDef) Define(k ConfigKey) *ConfigDef {
	if _, dup := d.index[k.Name]; dup {
		panic(fmt.Sprintf("Configuration %s is defined twice.", k.Name))
	}
	if k.Width == "" {
		k.Width = WidthNone
	}
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	if k.Group == "" && k.OrderInGroup == 0 {
		k.OrderInGroup = -1
	}
	if k.Required {
		k.Default = nil
	} else if s, ok := k.Default.(string); ok && k.Type != TypeString {
		v, err := ParseType(k.Name, s, k.Type, d.ResolveClass)
		if err != nil {
			panic(fmt.Sprintf("invalid default for %s: %v", k.Name, err))
		}
		k.Default = v
	}
	d.add(&k)
	return d
}

func (d *ConfigDef) add(k *ConfigKey) {
	d.index[k.Name] = len(d.keys)
	d.keys = append(d.keys, k)
	if k.Group != "" && !slices.Contains(d.groups, k.Group) {
		d.groups = append(d.groups, k.Group)
	}
}

// Keys returns copies of the keys in definition order.
func (d *ConfigDef) Keys() []ConfigKey {
	out := make([]ConfigKey, len(d.keys))
	for i, k := range d.keys {
		out[i] = *k
	}
	return out
}

// Key returns the key called name.
func (d *ConfigDef) Key(name string) (ConfigKey, bool) {
	i, ok := d.index[name]
	if !ok {
		return ConfigKey{}, false
	}
	return *d.keys[i], true
}

// Names returns the key names in definition order.
func (d *ConfigDef) Names() []string {
	out := make([]string, len(d.keys))
	for i, k := range d.keys {
		out[i] = k.Name
	}
	return out
}

// Groups returns the groups in the order their first key was defined.
func (d *ConfigDef) Groups() []string { return slices.Clone(d.groups) }

// ConfigValue is the validation result for one key (Kafka's ConfigValue,
// with the value already rendered as the REST API shows it).
type ConfigValue struct {
	Name string
	// Value is the parsed value rendered as a string; nil for null.
	Value             *string
	RecommendedValues []string
	Errors            []string
	Visible           bool
}

// AddError appends an error message.
func (v *ConfigValue) AddError(msg string) { v.Errors = append(v.Errors, msg) }

// FindValue returns the entry called name in values, or nil.
func FindValue(values []ConfigValue, name string) *ConfigValue {
	for i := range values {
		if values[i].Name == name {
			return &values[i]
		}
	}
	return nil
}

type validation struct {
	value             any
	recommendedValues []any
	errors            []string
	visible           bool
}

// Validate checks props against every key, as Kafka's ConfigDef.validateAll:
// a missing required key, a value that does not parse and a validator's
// complaint each add an error; recommenders set recommended values and
// visibility. Results come in definition order; props that no key defines
// are ignored.
func (d *ConfigDef) Validate(props map[string]string) []ConfigValue {
	vals := make(map[string]*validation, len(d.keys))
	for _, k := range d.keys {
		vals[k.Name] = &validation{visible: true}
	}
	var undefined []string
	for _, k := range d.keys {
		for _, dep := range k.Dependents {
			if _, ok := d.index[dep]; !ok && !slices.Contains(undefined, dep) {
				undefined = append(undefined, dep)
			}
		}
	}
	for _, name := range undefined {
		vals[name] = &validation{errors: []string{name + " is referred in the dependents, but not defined."}}
	}
	roots := d.roots()
	parsed := map[string]any{}
	seen := map[string]bool{}
	for _, name := range roots {
		d.parseForValidate(name, props, parsed, vals, seen)
	}
	seen = map[string]bool{}
	for _, name := range roots {
		d.recommend(name, parsed, vals, seen)
	}
	out := make([]ConfigValue, 0, len(vals))
	for _, k := range d.keys {
		out = append(out, vals[k.Name].render(k.Name, k.Type))
	}
	for _, name := range undefined {
		out = append(out, vals[name].render(name, ""))
	}
	return out
}

func (v *validation) render(name string, t ConfigType) ConfigValue {
	rt := t
	if t == TypeList {
		// Kafka renders a LIST key's recommended values one by one as STRINGs.
		rt = TypeString
	}
	recs := make([]string, 0, len(v.recommendedValues))
	for _, r := range v.recommendedValues {
		if s := ConvertToString(r, rt); s != nil {
			recs = append(recs, *s)
		}
	}
	var val *string
	if t == "" {
		val = ConvertToString(v.value, TypeString)
	} else {
		val = ConvertToString(v.value, t)
	}
	return ConfigValue{Name: name, Value: val, RecommendedValues: recs, Errors: append([]string{}, v.errors...), Visible: v.visible}
}

// roots are the keys no other key lists as a dependent; validation walks
// from them so that a dependent is seen after its parent.
func (d *ConfigDef) roots() []string {
	child := map[string]bool{}
	for _, k := range d.keys {
		for _, dep := range k.Dependents {
			child[dep] = true
		}
	}
	var out []string
	for _, k := range d.keys {
		if !child[k.Name] {
			out = append(out, k.Name)
		}
	}
	return out
}

func (d *ConfigDef) parseForValidate(name string, props map[string]string, parsed map[string]any, vals map[string]*validation, seen map[string]bool) {
	i, ok := d.index[name]
	if !ok || seen[name] {
		return
	}
	seen[name] = true
	k := d.keys[i]
	v := vals[name]
	var value any
	if raw, set := props[name]; set {
		p, err := ParseType(name, raw, k.Type, d.ResolveClass)
		if err != nil {
			v.errors = append(v.errors, err.Error())
		} else {
			value = p
		}
	} else if k.Required {
		v.errors = append(v.errors, missingMessage(name))
	} else {
		value = k.Default
	}
	if k.Validator != nil {
		if err := k.Validator.EnsureValid(name, value); err != nil {
			v.errors = append(v.errors, err.Error())
		}
	}
	v.value = value
	parsed[name] = value
	for _, dep := range k.Dependents {
		d.parseForValidate(dep, props, parsed, vals, seen)
	}
}

func (d *ConfigDef) recommend(name string, parsed map[string]any, vals map[string]*validation, seen map[string]bool) {
	i, ok := d.index[name]
	if !ok || seen[name] {
		return
	}
	seen[name] = true
	k := d.keys[i]
	if k.Recommender != nil {
		v := vals[name]
		v.recommendedValues = k.Recommender.ValidValues(name, parsed)
		v.visible = k.Recommender.Visible(name, parsed)
	}
	for _, dep := range k.Dependents {
		d.recommend(dep, parsed, vals, seen)
	}
}

// MissingMessage is Kafka's error for a required key that is absent, for
// connectors whose Validate requires a key their ConfigDef leaves optional.
func MissingMessage(name string) string { return missingMessage(name) }

func missingMessage(name string) string {
	return `Missing required configuration "` + name + `" which has no default value.`
}

// Values are parsed config values by key name, as Parse returns them.
type Values map[string]any

// Parse parses and validates props for use at runtime (Kafka's
// AbstractConfig constructor): every defined key gets its parsed value or
// default. The first problem is returned as the error.
func (d *ConfigDef) Parse(props map[string]string) (Values, error) {
	out := make(Values, len(d.keys))
	for _, k := range d.keys {
		var value any
		if raw, set := props[k.Name]; set {
			p, err := ParseType(k.Name, raw, k.Type, d.ResolveClass)
			if err != nil {
				return nil, err
			}
			value = p
		} else if k.Required {
			return nil, &ConfigError{Message: missingMessage(k.Name)}
		} else {
			value = k.Default
		}
		if k.Validator != nil {
			if err := k.Validator.EnsureValid(k.Name, value); err != nil {
				return nil, err
			}
		}
		out[k.Name] = value
	}
	return out, nil
}

// String returns a STRING (or CLASS or PASSWORD) value; "" for null.
func (v Values) String(name string) string {
	switch x := v[name].(type) {
	case string:
		return x
	case Class:
		return string(x)
	case Password:
		return string(x)
	}
	return ""
}

// Int returns an INT or SHORT value; 0 for null.
func (v Values) Int(name string) int {
	switch x := v[name].(type) {
	case int32:
		return int(x)
	case int16:
		return int(x)
	}
	return 0
}

// Long returns a LONG, INT or SHORT value; 0 for null.
func (v Values) Long(name string) int64 {
	if x, ok := v[name].(int64); ok {
		return x
	}
	return int64(v.Int(name))
}

// Bool returns a BOOLEAN value; false for null.
func (v Values) Bool(name string) bool {
	b, _ := v[name].(bool)
	return b
}

// Double returns a DOUBLE value; 0 for null.
func (v Values) Double(name string) float64 {
	f, _ := v[name].(float64)
	return f
}

// List returns a LIST value; nil for null.
func (v Values) List(name string) []string {
	l, _ := v[name].([]string)
	return l
}

// IsNull reports whether the key's value is null (unset with a null
// default).
func (v Values) IsNull(name string) bool { return v[name] == nil }
