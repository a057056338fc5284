package transforms

import (
	"github.com/sluice-io/sluice/connect"
)

// Plugins are the transformations and predicates, for the plugin registry.
func Plugins() []*connect.Plugin {
	var out []*connect.Plugin
	transformation := func(class string, def func() *connect.ConfigDef, make func() connect.Transformation) {
		out = append(out, &connect.Plugin{Class: class, Kind: connect.KindTransformation, Version: connect.Version,
			Config: def, NewTransformation: make})
	}
	sided := func(class string, def func() *connect.ConfigDef, make func(side) connect.Transformation) {
		for _, s := range []side{keySide, valueSide} {
			transformation(class+s.classSuffix(), def, func() connect.Transformation { return make(s) })
		}
	}
	transformation(RegexRouterClass, regexRouterDef, func() connect.Transformation { return &regexRouter{} })
	transformation(TimestampRouterClass, timestampRouterDef, func() connect.Transformation { return &timestampRouter{} })
	transformation(FilterClass, connect.NewConfigDef, func() connect.Transformation { return filter{} })
	transformation(InsertHeaderClass, insertHeaderDef, func() connect.Transformation { return &insertHeader{} })
	transformation(DropHeadersClass, dropHeadersDef, func() connect.Transformation { return &dropHeaders{} })
	sided(HoistFieldClass, hoistFieldDef, func(s side) connect.Transformation { return &hoistField{side: s} })
	sided(ExtractFieldClass, extractFieldDef, func(s side) connect.Transformation { return &extractField{side: s} })
	sided(InsertFieldClass, insertFieldDef, func(s side) connect.Transformation { return &insertField{side: s} })
	sided(ReplaceFieldClass, replaceFieldDef, func(s side) connect.Transformation { return &replaceField{side: s} })
	sided(MaskFieldClass, maskFieldDef, func(s side) connect.Transformation { return &maskField{side: s} })
	sided(CastClass, castDef, func(s side) connect.Transformation { return &cast{side: s} })
	sided(FlattenClass, flattenDef, func(s side) connect.Transformation { return &flatten{side: s} })
	sided(HeaderFromClass, headerFromDef, func(s side) connect.Transformation { return &headerFrom{side: s} })
	sided(SetSchemaMetadataClass, setSchemaMetadataDef, func(s side) connect.Transformation { return &setSchemaMetadata{side: s} })
	sided(TimestampConverterClass, timestampConverterDef, func(s side) connect.Transformation { return &timestampConverter{side: s} })
	transformation(ValueToKeyClass, valueToKeyDef, func() connect.Transformation { return &valueToKey{} })

	predicate := func(class string, def func() *connect.ConfigDef, make func() connect.Predicate) {
		out = append(out, &connect.Plugin{Class: class, Kind: connect.KindPredicate, Version: connect.Version,
			Config: def, NewPredicate: make})
	}
	predicate(HasHeaderKeyClass, hasHeaderKeyDef, func() connect.Predicate { return &hasHeaderKey{} })
	predicate(RecordIsTombstoneClass, connect.NewConfigDef, func() connect.Predicate { return recordIsTombstone{} })
	predicate(TopicNameMatchesClass, topicNameMatchesDef, func() connect.Predicate { return &topicNameMatches{} })
	return out
}
