# Sourced, not run: the shell functions that give a topology of deploy/topologies its keys.
# The tier demo (deploy/tiers-demo.sh) and the topology launcher (deploy/topologies/run.sh)
# share them, so the rules for who may connect where live in one place.
#
# A topology's configs name their key files relative to the working directory (like `data`):
#   secret-key          this hub's or proxy's key pair (NAME.key; NAME.pub beside it)
#   authorized-keys     the file this hub admits from
#   upstream-public-key the .pub of the hubs it beats to
# A launcher runs every hub of the topology in one state directory, its working directory, and
# calls topology_keys there first: the keys exist only in that directory, never in the tree.
# shellcheck shell=bash

# A scalar of a topology config: topo_conf FILE KEY (quotes removed; "" when absent).
topo_conf() { sed -n "s/^$2 *= *\"\{0,1\}\([^\"]*\)\"\{0,1\} *\$/\1/p" "$1"; }

# The elements of a list value of a topology config, one a line: topo_list FILE KEY.
topo_list() { sed -n "s/^$2 *= *\[\(.*\)\] *\$/\1/p" "$1" | tr -d '" ' | tr ',' '\n'; }

# A path from a config, as the hubs see it from the state directory: topo_path STATE PATH.
topo_path() { if [[ $2 == /* ]]; then echo "$2"; else echo "$1/$2"; fi; }

# The public key (Z85) in a NAME.pub file: the one line that is not a comment.
pub_key() { grep -v '^#' "$1" | head -n 1; }

# The .pub file of the key pair a config's hub or proxy runs with: hub_pub TOPO STATE NAME.
hub_pub() {
  local key
  key=$(topo_conf "$1/$3.toml" secret-key)
  [ -n "$key" ] || { echo "$1/$3.toml names no secret-key" >&2; return 1; }
  topo_path "$2" "${key%.key}.pub"
}

# A key pair STATE/keys/NAME.{key,pub} (or at the .key path given), made once: a state
# directory that is run again keeps its keys, so the nodes bound to them in hub.db stay theirs.
keygen_once() {  # cascadectl, NAME or path of NAME.key, state dir
  local file=$2
  [[ $file == *.key ]] || file=$3/keys/$2.key
  [ -e "$file" ] && return 0
  mkdir -p "$(dirname "$file")"
  "$1" keygen "$(basename "$file" .key)" --dir "$(dirname "$file")" >/dev/null
}

# Adds a line to a hub's authorised keys: authorize TOPO STATE HUB PUBFILE NAME ROLE [SCOPE...].
authorize() {
  local topo=$1 state=$2 hub=$3 pub=$4 file
  shift 4
  file=$(topo_path "$state" "$(topo_conf "$topo/$hub.toml" authorized-keys)")
  echo "$(pub_key "$pub") $*" >>"$file"
}

# Gives every hub and proxy of the topology its key pair and writes each one's authorised keys,
# anew at every start: the operator key as `operator` everywhere, and every hub or proxy that
# names this one as an upstream with its own key (role `hub`, or `proxy`). Agents are the
# launcher's to add (authorize), since only it knows what they register and use.
# Extra scopes for a lower hub's or proxy's line: NAME=SCOPES (e.g. "dc1-proxy=query=pay").
topology_keys() {  # topology dir, state dir, cascadectl, [NAME=SCOPES...]
  local topo=$1 state=$2 ctl=$3 toml name lower extra names=()
  shift 3
  local -A scopes=() listen=() ups=() role=() auth=()
  for extra in "$@"; do scopes[${extra%%=*}]=${extra#*=}; done
  declare -gA HUB_PUB=()  # endpoint -> .pub of the hub listening there, for ctl_as
  # Each config read once: forks are what a loaded machine makes slow.
  for toml in "$topo"/*.toml; do
    name=$(basename "$toml" .toml)
    names+=("$name")
    listen[$name]=$(topo_conf "$toml" listen)
    ups[$name]=" $(topo_list "$toml" upstream | tr '\n' ' ')"
    role[$name]=hub
    [ "$(topo_conf "$toml" proxy)" = true ] && role[$name]=proxy
    auth[$name]=$(topo_path "$state" "$(topo_conf "$toml" authorized-keys)")
    HUB_PUB[${listen[$name]}]=$(hub_pub "$topo" "$state" "$name")
    keygen_once "$ctl" "${HUB_PUB[${listen[$name]}]%.pub}.key" "$state"
  done
  keygen_once "$ctl" operator "$state"
  for name in "${names[@]}"; do
    {
      echo "# $name: written by deploy/topologies/keys.sh at each start"
      echo "$(pub_key "$state/keys/operator.pub") operator operator"
      for lower in "${names[@]}"; do
        [[ ${ups[$lower]} == *" ${listen[$name]} "* ]] || continue
        echo "$(pub_key "${HUB_PUB[${listen[$lower]}]}") $lower ${role[$lower]}${scopes[$lower]:+ ${scopes[$lower]}}"
      done
    } >"${auth[$name]}"
  done
}

# cascadectl as the holder of STATE/keys/NAME.key, to the hub of the topology at ENDPOINT (its
# public key from HUB_PUB, which topology_keys fills): ctl_as CASCADECTL STATE NAME ENDPOINT ARGS...
ctl_as() {
  local ctl=$1 state=$2 who=$3 ep=$4
  shift 4
  [ -n "${HUB_PUB[$ep]:-}" ] || { echo "no hub of the topology listens on $ep" >&2; return 2; }
  "$ctl" --hub "$ep" --secret-key "$state/keys/$who.key" --hub-public-key "${HUB_PUB[$ep]}" "$@"
}

# What the hub or proxy at ENDPOINT says of its transport in its status ("curve", "loopback" or
# "insecure"), asked as the operator; "" while it does not answer.
hub_security() {  # cascadectl, state dir, endpoint
  ctl_as "$1" "$2" operator "$3" --json status 2>/dev/null |
    sed -n 's/^  "security": "\(.*\)",\{0,1\}$/\1/p'
}

# True when the hub at ENDPOINT reports N upstreams reachable: upstreams_up CTL STATE ENDPOINT N.
upstreams_up() {
  [ "$(ctl_as "$1" "$2" operator "$3" --json topology 2>/dev/null | grep -c '"reachable": true')" = "$4" ]
}
