# bash completion for warden(1): commands, their options and the values of
# the options that take one of a few. Installed as
# $PREFIX/share/bash-completion/completions/warden.

_warden()
{
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="run audit sessions approvals approve deny doctor config explain rules version help"

	if [[ $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	# After "--" in run and explain: the agent's command line.
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return 0
		fi
	done

	case $prev in
	--project | --share-tmp)
		COMPREPLY=($(compgen -d -- "$cur"))
		return 0
		;;
	--audit | --open)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
		;;
	--tier)
		COMPREPLY=($(compgen -W "aggressive standard passive" -- "$cur"))
		return 0
		;;
	--prompt)
		COMPREPLY=($(compgen -W "desk tty none" -- "$cur"))
		return 0
		;;
	--role)
		COMPREPLY=($(compgen -W "agent review" -- "$cur"))
		return 0
		;;
	--view)
		COMPREPLY=($(compgen -W "auto fuse split" -- "$cur"))
		return 0
		;;
	--agent)
		COMPREPLY=($(compgen -W "claude-code codex aider none auto" -- "$cur"))
		return 0
		;;
	--decision)
		COMPREPLY=($(compgen -W "allow deny" -- "$cur"))
		return 0
		;;
	--kind)
		COMPREPLY=($(compgen -W "exec open connect" -- "$cur"))
		return 0
		;;
	--source)
		COMPREPLY=($(compgen -W "hard_deny rule grant session_grant accepted_rule fast_path covered startup harness judge judge_cache tier user timeout stopped error decoder limit integrity boundary" -- "$cur"))
		return 0
		;;
	--format)
		case $cmd in
		audit) COMPREPLY=($(compgen -W "table json csv" -- "$cur")) ;;
		explain) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
		esac
		return 0
		;;
	--session | --since | --limit | --note | --task | --parent | --approval-timeout | \
		--turn-idle | --by | --min-count | --min-deciders | --max-denied | --review-days)
		return 0 # a value only the user knows
		;;
	esac

	local opts
	case $cmd in
	run)
		opts="--project --audit --tier --prompt --approval-timeout --role --task --parent --agent --turn-idle --stats --no-view --view --keep-tmp --share-tmp --quiet --force --verbose --help --"
		;;
	audit)
		opts="--project --audit --session --last --since --decision --source --kind --limit --format --tool-calls --no-pager --help"
		;;
	sessions)
		opts="--project --audit --limit --format --no-pager --help"
		;;
	approvals)
		opts="--session --watch --format --help"
		;;
	approve)
		opts="--always --project --yes --note --help"
		;;
	deny)
		opts="--note --help"
		;;
	doctor)
		opts="--project --agent --help"
		;;
	config)
		if [[ $COMP_CWORD -eq 2 ]]; then
			COMPREPLY=($(compgen -W "check" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
		;;
	explain)
		opts="--project --format --open --write --connect --help --"
		;;
	rules)
		if [[ $COMP_CWORD -eq 2 ]]; then
			COMPREPLY=($(compgen -W "propose accept" -- "$cur"))
			return 0
		fi
		opts="--project --audit --min-count --min-deciders --max-denied --review-days --format --by --help"
		;;
	*)
		return 0
		;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	return 0
}
complete -F _warden warden
