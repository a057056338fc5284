// Package records encodes and decodes the records Sluice keeps in Kafka, in
// Kafka Connect's own formats (spec §7), so that a Sluice cluster's configs,
// statuses and offsets can be read by, or moved to, Kafka Connect. Config
// records are written only through the coordinator store's typed commands,
// which keep Kafka Connect's ordering rules; the config encoders here are
// their codec, not a second way to write.
//
//	config topic   connector-<name>      {"properties":{...}[,"sluice.plugin":{...}]}
//	               target-state-<name>   {"state":<v1>,"state.v2":<v2>}
//	               task-<name>-<n>       {"properties":{...}}
//	               commit-<name>         {"tasks":<n>}
//	               tasks-fencing-<name>  {"task-count":<n>}
//	status topic   status-connector-<name>, status-task-<name>-<n>
//	               {"state":..,"trace":..,"worker_id":..,"generation":..}
//	offsets topic  ["<connector>",{partition}] -> {offset} (null = removed)
package records
