package wire

// LoggerLevel is one logger's level, as GET /admin/loggers shows it
// (KIP-495, KIP-976): the level by log4j's name, and when it was last
// changed at run time, in milliseconds since the epoch, or null if never.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// LoggerSetting is one cluster-wide log level: a level (log4j's name) set
// on a logger namespace with PUT /admin/loggers/{namespace}?scope=cluster.
type LoggerSetting struct {
	Logger string `json:"logger"`
	Level  string `json:"level"`
}

// LoggersRequest sets log levels on an agent. Levels are the cluster's, in
// the order they were set, since a level set on a namespace also resets
// every namespace below it; applying the same list again changes nothing.
// The leader sends the whole list when an agent registers and whenever it
// changes.
type LoggersRequest struct {
	Term   int64           `json:"term"`
	Levels []LoggerSetting `json:"levels"`
}

// LoggersReply answers a LoggersRequest once the levels are set. Changed
// names the agent's loggers whose level changed.
type LoggersReply struct {
	Changed []string `json:"changed,omitempty"`
}
