# Sourced after lib.sh by a step whose caller reads its error (accel-probe
# and build-initramfs, for test-variant): die also writes MESSAGE as JSON
# to the file $STEP_ERROR names (pipeline/steperror.py reads it back), so
# that the caller gets it whole, never from the "error:" line. Not in
# lib.sh: lib.sh is among the kernel build's own commands (build-kernel's
# tools hash), and this changes no kernel's bytes.

# json_string TEXT: TEXT as a JSON string.
json_string() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	printf '"%s"' "${s//[$'\001'-$'\037']/?}"
}

die() {
	printf 'error: %s\n' "$*" >&2
	if [ -n "${STEP_ERROR:-}" ]; then
		printf '{"error": %s, "by": %s}\n' "$(json_string "$*")" "$(json_string "${0##*/}")" >"$STEP_ERROR" || true
	fi
	exit 2
}
