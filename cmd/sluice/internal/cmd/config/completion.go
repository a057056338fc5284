package config

import (
	"fmt"

	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/urfave/cli/v2"
)

// The shell completion scripts: they ask the binary for completions with
// urfave/cli's --generate-bash-completion (EnableBashCompletion).
const bashCompletion = `# sluice bash completion: source <(sluice completion bash)
_sluice_complete() {
  local cur opts
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [[ "$cur" == "-"* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _sluice_complete sluice
`

const zshCompletion = `#compdef sluice
# sluice zsh completion: source <(sluice completion zsh)
_sluice() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
if [ "$funcstack[1]" = "_sluice" ]; then
  _sluice "$@"
else
  compdef _sluice sluice
fi
`

// fishCompletion asks the binary as the others do: the words typed so
// far, then --generate-bash-completion.
const fishCompletion = `# sluice fish completion: sluice completion fish | source
function __sluice_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    if string match -q -- '-*' "$cur"
        command $words[1] $words[2..-1] $cur --generate-bash-completion 2>/dev/null
    else
        command $words[1] $words[2..-1] --generate-bash-completion 2>/dev/null
    end
end
complete -c sluice -f -a '(__sluice_complete)'
`

// scripts are the completion scripts by shell.
var scripts = map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

// Completion prints a shell's completion script.
func Completion() *cli.Command {
	return &cli.Command{
		Name: "completion", ArgsUsage: "bash|zsh|fish",
		Usage: "print the shell completion script (source <(sluice completion bash)): commands, flags, and connector names and plugin classes asked of the server",
		Action: func(c *cli.Context) error {
			script, ok := scripts[c.Args().First()]
			if !ok || c.NArg() != 1 {
				return session.Usage("completion: give bash, zsh or fish")
			}
			fmt.Fprint(c.App.Writer, script)
			return nil
		},
	}
}
