package wire

// Keys of RegisterRequest.Settings that the coordinator reads.
const (
	// SettingWorkDir is the agent's working directory: relative file
	// paths of its tasks resolve against it.
	SettingWorkDir = "work_dir"
	// SettingFileAllowedPaths lists, comma-separated, the directories the
	// agent lets tasks' files be in (--file-allowed-paths, symlinks
	// resolved). Absent or empty: the agent allows every path.
	SettingFileAllowedPaths = "file_allowed_paths"
)
