package validate

import (
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/wire"
)

// The preflight checks of a source connector's exactly-once settings
// (Kafka's DistributedHerder.validateSourceConnectorExactlyOnceSupport and
// validateSourceConnectorTransactionBoundary): exactly.once.support=required
// needs the cluster's exactly-once support and a connector that says
// SUPPORTED; transaction.boundary=connector needs a connector that can
// define its boundaries. Each runs only when its key has no error yet.

// Kafka Connect's messages, which scripts match.
const (
	msgWorkerNoExactlyOnce    = "This worker does not have exactly-once source support enabled."
	msgExactlyOnceNotAnswered = "The connector does not implement the API required for preflight validation of exactly-once " +
		"source support. Please consult the documentation for the connector to determine whether it supports exactly-once " +
		"semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property " +
		"(which will disable this preflight check and allow the connector to be created)."
	msgExactlyOnceUnsupported = "The connector does not support exactly-once semantics with the provided configuration."
	msgBoundariesNull         = "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not permitted. " +
		"The connector will be treated as if it cannot define its own transaction boundaries, and cannot be configured with " +
		"'transaction.boundary' set to 'connector'."
	msgBoundariesUnsupported = "The connector does not support connector-defined transaction boundaries with the given configuration. " +
		"Please reconfigure it to use a different transaction boundary definition."
)

// PreflightAsks reports which preflight checks props ask for: the answers
// a validation of props needs from the connector.
func PreflightAsks(props map[string]string) (exactlyOnce, boundaries bool) {
	return strings.EqualFold(connect.JavaTrim(props[ExactlyOnceSupportConfig]), "required"),
		strings.EqualFold(connect.JavaTrim(props[TransactionBoundaryConfig]), "connector")
}

// askFunc gives the connector's answers to the checks props ask for.
type askFunc func(props map[string]string) wire.SourcePreflight

// goPreflight asks a Go connector through its optional interfaces.
func goPreflight(conn connect.Connector) askFunc {
	return func(props map[string]string) wire.SourcePreflight {
		var out wire.SourcePreflight
		eos, boundaries := PreflightAsks(props)
		if eos {
			a := &wire.PreflightAnswer{}
			if c, ok := conn.(connect.ExactlyOnceSourceConnector); ok {
				s, err := c.ExactlyOnceSupport(props)
				a.Support = string(s)
				if err != nil {
					a.Threw, a.Message = true, err.Error()
				}
			}
			out.ExactlyOnce = a
		}
		if boundaries {
			a := &wire.PreflightAnswer{Support: string(connect.SupportUnsupported)}
			if c, ok := conn.(connect.TransactionBoundaryConnector); ok {
				s, err := c.CanDefineTransactionBoundaries(props)
				a.Support = string(s)
				if err != nil {
					a.Threw, a.Message = true, err.Error()
				}
			}
			out.TransactionBoundaries = a
		}
		return out
	}
}

// answered asks nothing: the answers came with the request (a connector
// whose plugin runs in another process). nil is no answers at all (no
// process had the plugin to ask): the connector's checks are skipped.
func answered(p *wire.SourcePreflight) askFunc {
	if p == nil {
		return nil
	}
	return func(map[string]string) wire.SourcePreflight { return *p }
}

// checkPreflight adds the preflight checks' errors to values; ask nil
// checks only the cluster's support.
func checkPreflight(props map[string]string, values []connect.ConfigValue, exactlyOnceEnabled bool, ask askFunc) {
	eosValue, boundaryValue := connect.FindValue(values, ExactlyOnceSupportConfig), connect.FindValue(values, TransactionBoundaryConfig)
	eos, boundaries := PreflightAsks(props)
	eos = eos && eosValue != nil && len(eosValue.Errors) == 0
	boundaries = boundaries && boundaryValue != nil && len(boundaryValue.Errors) == 0
	if !eos && !boundaries {
		return
	}
	if eos && !exactlyOnceEnabled {
		eosValue.AddError(msgWorkerNoExactlyOnce)
	}
	if ask == nil {
		return
	}
	answers := ask(props)
	if eos {
		a := answers.ExactlyOnce
		switch {
		case a == nil:
			// Not asked where the plugin runs: a connector that answers nothing.
			eosValue.AddError(msgExactlyOnceNotAnswered)
		case a.Threw:
			eosValue.AddError(unexpected(a.Message))
		case a.Support == string(connect.SupportSupported):
		case a.Support == string(connect.SupportUnknown):
			eosValue.AddError(msgExactlyOnceNotAnswered)
		default:
			eosValue.AddError(msgExactlyOnceUnsupported)
		}
	}
	if boundaries {
		a := answers.TransactionBoundaries
		switch {
		case a == nil || a.Support == string(connect.SupportUnknown) && !a.Threw:
			boundaryValue.AddError(msgBoundariesNull)
		case a.Threw:
			boundaryValue.AddError(unexpected(a.Message))
		case a.Support != string(connect.SupportSupported):
			boundaryValue.AddError(msgBoundariesUnsupported)
		}
	}
}

// unexpected is Kafka's message for a preflight method that threw.
func unexpected(msg string) string {
	if msg = connect.JavaTrim(msg); msg != "" {
		return "An unexpected error occurred during validation: " + msg
	}
	return "An unexpected error occurred during validation; please see the worker logs for more details."
}
