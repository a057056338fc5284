package validate

import (
	"regexp"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

// Keys of the framework-level connector config (Kafka's ConnectorConfig,
// SourceConnectorConfig and SinkConnectorConfig) and Sluice's own.
const (
	NameConfig                   = "name"
	ConnectorClassConfig         = "connector.class"
	ConnectorVersionConfig       = "connector.plugin.version"
	TasksMaxConfig               = "tasks.max"
	TasksMaxEnforceConfig        = "tasks.max.enforce"
	KeyConverterConfig           = "key.converter"
	KeyConverterVersionConfig    = "key.converter.plugin.version"
	ValueConverterConfig         = "value.converter"
	ValueConverterVersionConfig  = "value.converter.plugin.version"
	HeaderConverterConfig        = "header.converter"
	HeaderConverterVersionConfig = "header.converter.plugin.version"
	TransformsConfig             = "transforms"
	PredicatesConfig             = "predicates"
	ConfigReloadActionConfig     = "config.action.reload"
	ErrorsRetryTimeoutConfig     = "errors.retry.timeout"
	ErrorsRetryMaxDelayConfig    = "errors.retry.delay.max.ms"
	ErrorsToleranceConfig        = "errors.tolerance"
	ErrorsLogEnableConfig        = "errors.log.enable"
	ErrorsLogIncludeMessagesConf = "errors.log.include.messages"

	TopicCreationGroupsConfig   = "topic.creation.groups"
	ExactlyOnceSupportConfig    = "exactly.once.support"
	TransactionBoundaryConfig   = "transaction.boundary"
	TransactionIntervalConfig   = "transaction.boundary.interval.ms"
	OffsetsStorageTopicConfig   = "offsets.storage.topic"
	TopicsConfig                = "topics"
	TopicsRegexConfig           = "topics.regex"
	DLQTopicNameConfig          = "errors.deadletterqueue.topic.name"
	DLQReplicationFactorConfig  = "errors.deadletterqueue.topic.replication.factor"
	DLQContextHeadersEnableConf = "errors.deadletterqueue.context.headers.enable"

	// AgentSelectorConfig is Sluice's placement key: the labels an agent
	// must have to run the connector's tasks.
	AgentSelectorConfig = "sluice.agent.selector"
	// LabelsConfig is Sluice's labels of a connector, key=value pairs the
	// fleet listing shows and filters on (GET /sluice/fleet/connectors).
	LabelsConfig = "sluice.labels"
)

// MaxTasks bounds tasks.max (Kafka sets no upper bound): the coordinator
// builds a connector's task configs, and fences and revokes every task id up
// to tasks.max for an offsets change, so an unbounded value could make it
// allocate without bound.
const MaxTasks = 10_000

// Group names, as Kafka spells them, and Sluice's.
const (
	commonGroup        = "Common"
	transformsGroup    = "Transforms"
	predicatesGroup    = "Predicates"
	errorGroup         = "Error Handling"
	topicCreationGroup = "Topic Creation"
	eosGroup           = "Exactly Once Support"
	offsetsTopicGroup  = "offsets.topic"
	sluiceGroup        = "Sluice"
)

const (
	connectorClassDoc = "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. " +
		"If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name, " +
		" or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter"
	keyConverterDoc = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka." +
		" This controls the format of the keys in messages written to or read from Kafka, and since this is" +
		" independent of connectors it allows any connector to work with any serialization format." +
		" Examples of common formats include JSON and Avro."
	valueConverterDoc = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka." +
		" This controls the format of the values in messages written to or read from Kafka, and since this is" +
		" independent of connectors it allows any connector to work with any serialization format." +
		" Examples of common formats include JSON and Avro."
	headerConverterDoc = "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka." +
		" This controls the format of the header values in messages written to or read from Kafka, and since this is" +
		" independent of connectors it allows any connector to work with any serialization format." +
		" Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize" +
		" header values to strings and deserialize them by inferring the schemas."
	tasksMaxEnforceDoc = "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. " +
		"By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. " +
		"If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of " +
		"tasks that exceed the tasks.max property will be allowed to run. " +
		"This property is deprecated and will be removed in an upcoming major release."
	reloadDoc = "The action that Connect should take on the connector when changes in external " +
		"configuration providers result in a change in the connector's configuration properties. " +
		"A value of 'none' indicates that Connect will do nothing. " +
		"A value of 'restart' indicates that Connect should restart/reload the connector with the " +
		"updated configuration properties." +
		"The restart may actually be scheduled in the future if the external configuration provider " +
		"indicates that a configuration value will expire in the future."
	retryTimeoutDoc = "The maximum duration in milliseconds that a failed operation " +
		"will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries."
	retryMaxDelayDoc = "The maximum duration in milliseconds between consecutive retry attempts. " +
		"Jitter will be added to the delay once this limit is reached to prevent thundering herd issues."
	toleranceDoc = "Behavior for tolerating errors during connector operation. 'none' is the default value " +
		"and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records."
	logEnableDoc = "If true, write each error and the details of the failed operation and problematic record " +
		"to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported."
	logIncludeDoc = "Whether to include in the log the Connect record that resulted in a failure. " +
		"For sink records, the topic, partition, offset, and timestamp will be logged. " +
		"For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, " +
		"and source offset will be logged. " +
		"This is 'false' by default, which will prevent record keys, values, and headers from being written to log files."
	eosDoc = "Permitted values are requested, required. " +
		"If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics " +
		"with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to " +
		"Connect that they support this; in that case, documentation for the connector should be consulted carefully before " +
		"creating it, and the value for this property should be set to \"requested\". " +
		"Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have " +
		"exactly-once support enabled for source connectors, requests to create or validate the connector will fail."
	boundaryDoc = "Permitted values are: poll, interval, connector. " +
		"If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from " +
		"this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that " +
		"not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with " +
		"this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed."
	intervalDoc = "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. " +
		"If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different " +
		"transaction.boundary is specified."
	offsetsTopicDoc = "The name of a separate offsets topic to use for this connector. " +
		"If empty or not specified, the worker\u2019s global offsets topic name will be used. " +
		"If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector " +
		"(which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer " +
		"has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect."
	topicsRegexDoc = "Regular expression giving topics to consume. " +
		"Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. " +
		"Only one of topics or topics.regex should be specified."
	dlqTopicDoc = "The name of the topic to be used as the dead letter queue (DLQ) for messages that " +
		"result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, " +
		"which means that no messages are to be recorded in the DLQ."
	dlqHeadersDoc = "If true, add headers containing error context to the messages " +
		"written to the dead letter queue. To avoid clashing with headers from the original record, all error context header " +
		"keys, all error context header keys will start with <code>__connect.errors.</code>"
	selectorDoc = "Labels an agent must have to run this connector's tasks, as comma-separated key=value pairs " +
		"(for example zone=a,host=web-1). Unset or empty: any agent. A file source should name the host its file is on."
	labelsDoc = "Labels of this connector, as comma-separated key=value pairs (for example team=payments,env=prod): " +
		"the fleet listing shows them and filters on them. They change nothing in how the connector runs."
)

// converterDefaults are the default class and version of one converter key:
// the worker's converter when it has one (Kafka 4.1's ConverterDefaults).
type converterDefaults struct {
	class   any // connect.Class or nil
	version any // string or nil
}

// defsInput is what the framework definition depends on.
type defsInput struct {
	reg              *plugins.Registry
	connector        *connect.Plugin
	connectorVersion any // default of connector.plugin.version
	key, value, hdr  converterDefaults
	recommend        bool
}

// baseDef builds the framework part of a connector's ConfigDef: Kafka's
// ConnectorConfig keys, the source or sink additions, then Sluice's group.
func baseDef(in defsInput) *connect.ConfigDef {
	reg := in.reg
	d := connect.NewConfigDef()
	d.ResolveClass = func(name string) (string, bool) {
		p, ok := reg.Lookup(name)
		if !ok {
			return "", false
		}
		return p.Class, true
	}
	rec := func(r connect.Recommender) connect.Recommender {
		if !in.recommend {
			return nil
		}
		return r
	}
	order := 0
	next := func() int { order++; return order }
	d.Define(connect.ConfigKey{Name: NameConfig, Type: connect.TypeString, Required: true,
		Validator: connect.NonEmptyStringWithoutControlChars{}, Importance: connect.ImportanceHigh,
		Documentation: "Globally unique name to use for this connector.", Group: commonGroup, OrderInGroup: next(),
		Width: connect.WidthMedium, DisplayName: "Connector name"})
	d.Define(connect.ConfigKey{Name: ConnectorClassConfig, Type: connect.TypeString, Required: true,
		Importance: connect.ImportanceHigh, Documentation: connectorClassDoc, Group: commonGroup, OrderInGroup: next(),
		Width: connect.WidthLong, DisplayName: "Connector class"})
	d.Define(connect.ConfigKey{Name: ConnectorVersionConfig, Type: connect.TypeString, Default: in.connectorVersion,
		Importance: connect.ImportanceMedium, Documentation: "Version of the connector.", Group: commonGroup,
		OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Connector version",
		Recommender: rec(connectorVersionRecommender{reg})})
	d.Define(connect.ConfigKey{Name: TasksMaxConfig, Type: connect.TypeInt, Default: int32(1),
		Validator: connect.Between(1, MaxTasks), Importance: connect.ImportanceHigh,
		Documentation: "Maximum number of tasks to use for this connector.", Group: commonGroup, OrderInGroup: next(),
		Width: connect.WidthShort, DisplayName: "Tasks max"})
	d.Define(connect.ConfigKey{Name: TasksMaxEnforceConfig, Type: connect.TypeBoolean, Default: true,
		Importance: connect.ImportanceLow, Documentation: tasksMaxEnforceDoc, Group: commonGroup, OrderInGroup: next(),
		Width: connect.WidthShort, DisplayName: "Enforce tasks max"})
	for _, c := range []struct {
		key, versionKey, doc, display, versionDoc, versionDisplay string
		header                                                    bool
		defaults                                                  converterDefaults
	}{
		{KeyConverterConfig, KeyConverterVersionConfig, keyConverterDoc, "Key converter class", "Version of the key converter.", "Key converter version", false, in.key},
		{ValueConverterConfig, ValueConverterVersionConfig, valueConverterDoc, "Value converter class", "Version of the value converter.", "Value converter version", false, in.value},
		{HeaderConverterConfig, HeaderConverterVersionConfig, headerConverterDoc, "Header converter class", "Version of the header converter.", "Header converter version", true, in.hdr},
	} {
		d.Define(connect.ConfigKey{Name: c.key, Type: connect.TypeClass, Default: c.defaults.class,
			Validator: converterClassValidator{reg, c.header}, Importance: connect.ImportanceLow, Documentation: c.doc,
			Group: commonGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: c.display,
			Recommender: rec(converterRecommender{reg, c.header})})
		d.Define(connect.ConfigKey{Name: c.versionKey, Type: connect.TypeString, Default: c.defaults.version,
			Importance: connect.ImportanceLow, Documentation: c.versionDoc, Group: commonGroup, OrderInGroup: next(),
			Width: connect.WidthShort, DisplayName: c.versionDisplay,
			Recommender: rec(converterVersionRecommender{reg, c.key})})
	}
	aliases := connect.Composite{connect.NonNull{}, connect.UniqueList{}}
	d.Define(connect.ConfigKey{Name: TransformsConfig, Type: connect.TypeList, Default: []string{}, Validator: aliases,
		Importance: connect.ImportanceLow, Documentation: "Aliases for the transformations to be applied to records.",
		Group: transformsGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Transforms"})
	d.Define(connect.ConfigKey{Name: PredicatesConfig, Type: connect.TypeList, Default: []string{}, Validator: aliases,
		Importance: connect.ImportanceLow, Documentation: "Aliases for the predicates used by transformations.",
		Group: predicatesGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Predicates"})
	d.Define(connect.ConfigKey{Name: ConfigReloadActionConfig, Type: connect.TypeString, Default: "restart",
		Validator: connect.In("none", "restart"), Importance: connect.ImportanceLow, Documentation: reloadDoc,
		Group: commonGroup, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Reload Action"})
	errOrder := 0
	nextErr := func() int { errOrder++; return errOrder }
	d.Define(connect.ConfigKey{Name: ErrorsRetryTimeoutConfig, Type: connect.TypeLong, Default: int64(0),
		Importance: connect.ImportanceMedium, Documentation: retryTimeoutDoc, Group: errorGroup, OrderInGroup: nextErr(),
		Width: connect.WidthMedium, DisplayName: "Retry Timeout for Errors"})
	d.Define(connect.ConfigKey{Name: ErrorsRetryMaxDelayConfig, Type: connect.TypeLong, Default: int64(60000),
		Importance: connect.ImportanceMedium, Documentation: retryMaxDelayDoc, Group: errorGroup, OrderInGroup: nextErr(),
		Width: connect.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors"})
	d.Define(connect.ConfigKey{Name: ErrorsToleranceConfig, Type: connect.TypeString, Default: "none",
		Validator: connect.In("none", "all"), Importance: connect.ImportanceMedium, Documentation: toleranceDoc,
		Group: errorGroup, OrderInGroup: nextErr(), Width: connect.WidthShort, DisplayName: "Error Tolerance"})
	d.Define(connect.ConfigKey{Name: ErrorsLogEnableConfig, Type: connect.TypeBoolean, Default: false,
		Importance: connect.ImportanceMedium, Documentation: logEnableDoc, Group: errorGroup, OrderInGroup: nextErr(),
		Width: connect.WidthShort, DisplayName: "Log Errors"})
	d.Define(connect.ConfigKey{Name: ErrorsLogIncludeMessagesConf, Type: connect.TypeBoolean, Default: false,
		Importance: connect.ImportanceMedium, Documentation: logIncludeDoc, Group: errorGroup, OrderInGroup: nextErr(),
		Width: connect.WidthShort, DisplayName: "Log Error Details"})
	if in.connector.Kind == connect.KindSink {
		defineSink(d)
	} else {
		defineSource(d)
	}
	d.Define(connect.ConfigKey{Name: AgentSelectorConfig, Type: connect.TypeString, Validator: selectorValidator{},
		Importance: connect.ImportanceMedium, Documentation: selectorDoc, Group: sluiceGroup, OrderInGroup: 1,
		Width: connect.WidthLong, DisplayName: "Agent selector"})
	d.Define(connect.ConfigKey{Name: LabelsConfig, Type: connect.TypeString, Validator: selectorValidator{},
		Importance: connect.ImportanceLow, Documentation: labelsDoc, Group: sluiceGroup, OrderInGroup: 2,
		Width: connect.WidthLong, DisplayName: "Labels"})
	return d
}

func defineSource(d *connect.ConfigDef) {
	d.Define(connect.ConfigKey{Name: TopicCreationGroupsConfig, Type: connect.TypeList, Default: []string{},
		Validator: connect.Composite{connect.NonNull{}, connect.UniqueList{}}, Importance: connect.ImportanceLow,
		Documentation: "Groups of configurations for topics created by source connectors", Group: topicCreationGroup,
		OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Topic Creation Groups"})
	d.Define(connect.ConfigKey{Name: ExactlyOnceSupportConfig, Type: connect.TypeString, Default: "requested",
		Validator: connect.InCaseInsensitive("requested", "required"), Importance: connect.ImportanceMedium,
		Documentation: eosDoc, Group: eosGroup, OrderInGroup: 2, Width: connect.WidthShort, DisplayName: "Exactly once support"})
	d.Define(connect.ConfigKey{Name: TransactionBoundaryConfig, Type: connect.TypeString, Default: "poll",
		Validator: connect.InCaseInsensitive("poll", "interval", "connector"), Importance: connect.ImportanceMedium,
		Documentation: boundaryDoc, Group: eosGroup, OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Transaction Boundary"})
	atLeastZero := connect.AtLeast(0)
	d.Define(connect.ConfigKey{Name: TransactionIntervalConfig, Type: connect.TypeLong,
		Validator: connect.ValidatorFunc(func(name string, v any) error {
			if v == nil {
				return nil
			}
			return atLeastZero.EnsureValid(name, v)
		}), Importance: connect.ImportanceLow, Documentation: intervalDoc, Group: eosGroup, OrderInGroup: 4,
		Width: connect.WidthShort, DisplayName: "Transaction boundary interval"})
	d.Define(connect.ConfigKey{Name: OffsetsStorageTopicConfig, Type: connect.TypeString,
		Validator: connect.NonEmptyString{}, Importance: connect.ImportanceLow, Documentation: offsetsTopicDoc, Group: offsetsTopicGroup,
		OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Offsets topic"})
}

func defineSink(d *connect.ConfigDef) {
	d.Define(connect.ConfigKey{Name: TopicsConfig, Type: connect.TypeList, Default: "", Importance: connect.ImportanceHigh,
		Documentation: "List of topics to consume, separated by commas", Group: commonGroup, OrderInGroup: 4,
		Width: connect.WidthLong, DisplayName: "Topics"})
	d.Define(connect.ConfigKey{Name: TopicsRegexConfig, Type: connect.TypeString, Default: "", Validator: regexValidator{},
		Importance: connect.ImportanceHigh, Documentation: topicsRegexDoc, Group: commonGroup, OrderInGroup: 4,
		Width: connect.WidthLong, DisplayName: "Topics regex"})
	d.Define(connect.ConfigKey{Name: DLQTopicNameConfig, Type: connect.TypeString, Default: "",
		Importance: connect.ImportanceMedium, Documentation: dlqTopicDoc, Group: errorGroup, OrderInGroup: 6,
		Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Name"})
	d.Define(connect.ConfigKey{Name: DLQReplicationFactorConfig, Type: connect.TypeShort, Default: int16(3),
		Importance:    connect.ImportanceMedium,
		Documentation: "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
		Group:         errorGroup, OrderInGroup: 7, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Replication Factor"})
	d.Define(connect.ConfigKey{Name: DLQContextHeadersEnableConf, Type: connect.TypeBoolean, Default: false,
		Importance: connect.ImportanceMedium, Documentation: dlqHeadersDoc, Group: errorGroup, OrderInGroup: 8,
		Width: connect.WidthMedium, DisplayName: "Enable Error Context Headers"})
}

// regexValidator is Kafka's RegexValidator. Go's RE2 syntax differs from
// java.util.regex in places (no look-around or back-references), and its
// error text is Go's.
type regexValidator struct{}

// EnsureValid implements connect.Validator.
func (regexValidator) EnsureValid(name string, v any) error {
	s, _ := v.(string)
	if _, err := regexp.Compile(s); err != nil {
		return connect.InvalidValue(name, v, "Invalid regex: "+err.Error())
	}
	return nil
}

// converterClassValidator is Kafka's ConcreteSubClassValidator for Converter
// or HeaderConverter: a class that resolves but is some other kind of plugin
// fails with Kafka's message (whose doubled "Class class" is Java's).
type converterClassValidator struct {
	reg    *plugins.Registry
	header bool
}

// EnsureValid implements connect.Validator.
func (c converterClassValidator) EnsureValid(name string, v any) error {
	cls, ok := v.(connect.Class)
	if !ok {
		return nil
	}
	p, found := c.reg.Lookup(string(cls))
	if c.header {
		if !found || !(p.Kind == connect.KindHeaderConverter || p.HeaderConverter) {
			return &connect.ConfigError{Message: "Class class " + string(cls) + " does not implement the HeaderConverter interface"}
		}
		return nil
	}
	if !found || p.Kind != connect.KindConverter {
		return &connect.ConfigError{Message: "Class class " + string(cls) + " does not implement the Converter interface"}
	}
	return nil
}

type connectorVersionRecommender struct{ reg *plugins.Registry }

// ValidValues implements connect.Recommender.
func (r connectorVersionRecommender) ValidValues(_ string, parsed map[string]any) []any {
	cls, _ := parsed[ConnectorClassConfig].(string)
	if p, ok := r.reg.LookupConnector(cls); ok {
		return []any{p.Version}
	}
	return nil
}

// Visible implements connect.Recommender.
func (r connectorVersionRecommender) Visible(_ string, parsed map[string]any) bool {
	return parsed[ConnectorClassConfig] != nil
}

type converterRecommender struct {
	reg    *plugins.Registry
	header bool
}

// ValidValues implements connect.Recommender.
func (r converterRecommender) ValidValues(string, map[string]any) []any {
	ps := r.reg.Converters()
	if r.header {
		ps = r.reg.HeaderConverters()
	}
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = connect.Class(p.Class)
	}
	return out
}

// Visible implements connect.Recommender.
func (converterRecommender) Visible(string, map[string]any) bool { return true }

type converterVersionRecommender struct {
	reg      *plugins.Registry
	classKey string
}

// ValidValues implements connect.Recommender.
func (r converterVersionRecommender) ValidValues(_ string, parsed map[string]any) []any {
	cls, ok := parsed[r.classKey].(connect.Class)
	if !ok {
		return nil
	}
	if p, ok := r.reg.Lookup(string(cls)); ok {
		return []any{p.Version}
	}
	return nil
}

// Visible implements connect.Recommender.
func (r converterVersionRecommender) Visible(_ string, parsed map[string]any) bool {
	return parsed[r.classKey] != nil
}
