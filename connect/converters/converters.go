// Package converters holds Sluice's built-in converters, which turn Connect
// data into the bytes of Kafka record keys and values and back:
// StringConverter, JsonConverter and ByteArrayConverter under Kafka
// Connect's class names, and New, which builds the key or value converter a
// connector's config asks for.
package converters

import (
	"fmt"
	"maps"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// Class names of the built-in converters, as Kafka Connect names them.
const (
	StringClass    = "org.apache.kafka.connect.storage.StringConverter"
	JSONClass      = "org.apache.kafka.connect.json.JsonConverter"
	ByteArrayClass = "org.apache.kafka.connect.converters.ByteArrayConverter"
)

// TypeConfig is the converter.type key every converter defines; the runtime
// sets it to key, value or header.
const TypeConfig = "converter.type"

// Plugins returns the descriptors of the built-in converters: the three
// converters, which are also header converters in Kafka Connect, and
// SimpleHeaderConverter.
func Plugins() []*connect.Plugin {
	return []*connect.Plugin{
		{Class: StringClass, Kind: connect.KindConverter, Version: connect.Version, HeaderConverter: true,
			NewConverter: func() connect.Converter { return &String{} }, Config: StringConfigDef},
		{Class: JSONClass, Kind: connect.KindConverter, Version: connect.Version, HeaderConverter: true,
			NewConverter: func() connect.Converter { return &JSON{} }, Config: JSONConfigDef},
		{Class: ByteArrayClass, Kind: connect.KindConverter, Version: connect.Version, HeaderConverter: true,
			NewConverter: func() connect.Converter { return &ByteArray{} }, Config: ByteArrayConfigDef},
		SimpleHeaderPlugin(),
	}
}

// baseConfigDef is Kafka's ConverterConfig.newConfigDef: every converter has
// a required converter.type.
func baseConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{
		Name: TypeConfig, Type: connect.TypeString, Required: true,
		Validator:  connect.In("key", "value", "header"),
		Importance: connect.ImportanceLow, Documentation: "How this converter will be used.",
	})
}

// configure parses a converter's props the way Kafka's converters do: the
// isKey flag becomes converter.type.
func configure(def *connect.ConfigDef, props map[string]string, isKey bool) (connect.Values, error) {
	p := maps.Clone(props)
	if p == nil {
		p = map[string]string{}
	}
	if isKey {
		p[TypeConfig] = "key"
	} else {
		p[TypeConfig] = "value"
	}
	return def.Parse(p)
}

// Lookup resolves a class name or alias to a plugin; *plugins.Registry
// implements it.
type Lookup interface {
	Lookup(classOrAlias string) (*connect.Plugin, bool)
}

// New builds and configures the key (isKey) or value converter for a
// connector: the class in the connector's key.converter / value.converter,
// else workerDefaultClass, configured with the connector's
// key.converter.* / value.converter.* props with that prefix removed (Kafka
// Connect's Plugins.newConverter).
func New(reg Lookup, connectorProps map[string]string, workerDefaultClass string, isKey bool) (connect.Converter, error) {
	prop := "value.converter"
	if isKey {
		prop = "key.converter"
	}
	cls := ClassOf(connectorProps, prop, workerDefaultClass)
	if cls == "" {
		return nil, fmt.Errorf("Unable to initialize the Converter specified in '%s'", prop)
	}
	p, ok := reg.Lookup(cls)
	if !ok || p.Kind != connect.KindConverter || p.NewConverter == nil {
		return nil, fmt.Errorf("Failed to find any class that implements Converter and which name matches %s", cls)
	}
	return configured(p, connectorProps, prop, isKey)
}

// ClassOf is the converter class a connector's prop (key.converter,
// value.converter, header.converter) names, else workerDefaultClass.
func ClassOf(connectorProps map[string]string, prop, workerDefaultClass string) string {
	if v, ok := connectorProps[prop]; ok {
		return connect.JavaTrim(v)
	}
	return workerDefaultClass
}

// configured makes p's converter, configured with the connector's prop.*
// settings, prefix removed.
func configured(p *connect.Plugin, connectorProps map[string]string, prop string, isKey bool) (connect.Converter, error) {
	sub := map[string]string{}
	for k, v := range connectorProps {
		if rest, ok := strings.CutPrefix(k, prop+"."); ok {
			sub[rest] = v
		}
	}
	c := p.NewConverter()
	if err := c.Configure(sub, isKey); err != nil {
		return nil, err
	}
	return c, nil
}
