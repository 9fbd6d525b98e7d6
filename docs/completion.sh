#!/bin/sh
# completion.sh PROGRAM NAME - bash completion for hpckit's program NAME,
# made from its option table (PROGRAM --list-options: --name, -l, the
# value's name) at build time, so it cannot drift from the options:
# options complete after "-", a choice's values after it (--act <TAB>:
# tanh relu gelu), files after an option whose value names a FILE or an
# OUT, folders after a DIR; other values (numbers) are left to the user.
# Written to stdout; installed as PREFIX/share/bash-completion/completions/
# NAME, where bash-completion finds it (XDG_DATA_DIRS: module load hpckit).
set -e
prog=$1 name=$2
list=$(env -u HPC_LOG -u HPC_PROGRESS -u SLURM_JOB_ID -u PMI_RANK -u OMPI_COMM_WORLD_RANK "$prog" --list-options)
[ -n "$list" ] || { echo "completion.sh: $prog --list-options said nothing" >&2; exit 1; }
fn=_$(echo "$name" | tr -c 'a-zA-Z0-9\n' _)
words= files= dirs= choices=
# (tabs are whitespace to read: empty fields would vanish, so '-' holds them)
while read -r long short arg; do
    [ "$short" = - ] && short=
    words="$words $long${short:+ $short}"
    case $arg in
    -) ;;
    *"|"*) choices="$choices
        $long${short:+|$short}) COMPREPLY=(\$(compgen -W '$(echo "$arg" | tr '|' ' ')' -- \"\$cur\")); return ;;" ;;
    *DIR*) dirs="$dirs${dirs:+|}$long${short:+|$short}" ;;
    *FILE*|*OUT*|*PATH*) files="$files${files:+|}$long${short:+|$short}" ;;
    *) ;;
    esac
done <<EOF
$(printf '%s\n' "$list" | awk -F '\t' '{ print $1, ($2 == "" ? "-" : $2), ($3 == "" ? "-" : $3) }')
EOF
cat <<EOT
# bash completion for $name - made at build time from its option table
# ($name --list-options) by docs/completion.sh; do not edit.
$fn() {
    local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    case \$prev in$choices
EOT
[ -z "$files" ] || printf '        %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;\n' "$files"
[ -z "$dirs" ] || printf '        %s) COMPREPLY=($(compgen -d -- "$cur")); return ;;\n' "$dirs"
cat <<EOT
    esac
    case \$cur in
    -*) COMPREPLY=(\$(compgen -W '$(echo $words)' -- "\$cur")) ;;
    esac
}
complete -o default -o bashdefault -F $fn $name
EOT
