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

// Completion prints a shell's completion script.
func Completion() *cli.Command {
	return &cli.Command{
		Name: "completion", ArgsUsage: "bash|zsh",
		Usage: "print the shell completion script (source <(sluice completion bash))",
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				fmt.Fprint(c.App.Writer, bashCompletion)
			case "zsh":
				fmt.Fprint(c.App.Writer, zshCompletion)
			default:
				return session.Usage("completion: give bash or zsh")
			}
			return nil
		},
	}
}
