# shellcheck shell=bash
# The in-cluster deployment (manifests/): every object passes a server-side
# dry run against the stack's API server (admission, including the webhook
# and Pod Security, but nothing stored), and the RBAC the daemons get covers
# exactly what their code watches, with no wildcard.

MF_TOP=$(cd "$E2E_DIR/../.." && pwd)
MF_DIR=$MF_TOP/manifests

# mf_json FILE|DIR...: the objects as a stream of JSON documents (kubectl
# parses the YAML; nothing is sent to the API server).
mf_json() {
	local a=() f
	for f in "$@"; do a+=(-f "$f"); done
	k create --dry-run=client -o json -R "${a[@]}"
}

# mf_ns_gone NAME: the namespace does not exist (not even Terminating).
mf_ns_gone() { ! k get namespace "$1" >/dev/null 2>&1; }

# mf_ns_ensure FILE: namespaced objects cannot be dry-run into a namespace
# that does not exist, so the Namespace in FILE is created for real (from
# the manifest itself, labels included) unless it exists.  Prints its name
# when this call created it.
mf_ns_ensure() {
	local name
	name=$(mf_json "$1" | jq -r 'select(.kind == "Namespace") | .metadata.name')
	[ -n "$name" ] || return 1
	if [ "$(k get namespace "$name" -o jsonpath='{.status.phase}' 2>/dev/null)" = Terminating ]; then
		wait_for 120 mf_ns_gone "$name" || return 1
	fi
	mf_ns_gone "$name" || return 0
	k apply -f "$1" >/dev/null || return 1
	# Pods are refused until the controller-manager made the default
	# service account.
	wait_for 30 k -n "$name" get serviceaccount default || return 1
	echo "$name"
}

scenario "manifests: kubectl apply --dry-run=server -R -f manifests/"
mf_created=()
for f in "$MF_DIR/00-namespace.yaml" "$MF_DIR/samples/00-namespace.yaml"; do
	if n=$(mf_ns_ensure "$f"); then
		[ -n "$n" ] && mf_created+=("$n")
	else
		fail "cannot create the namespace of ${f#"$MF_TOP"/}"
	fi
done
mf_out=$(k apply --dry-run=server -R -f "$MF_DIR" 2>&1)
mf_rc=$?
if [ "$mf_rc" -eq 0 ]; then
	pass "the server accepts every manifest"
else
	fail "kubectl apply --dry-run=server failed (rc $mf_rc):"
	grep -v '(server dry run)$' <<<"$mf_out" | sed 's/^/         /' | head -n 40
fi
mf_want=$(mf_json "$MF_DIR" | jq -s length)
mf_got=$(grep -c '(server dry run)$' <<<"$mf_out")
check_eq "every object was dry-run applied" "$mf_got" "$mf_want"
check "no object would violate Pod Security (slurm-bridge is 'restricted')" \
	test -z "$(grep -i 'would violate PodSecurity' <<<"$mf_out")"
check_eq "the PodGroup CRD is among them" \
	"$(grep -c '^customresourcedefinition[^ ]*/podgroups\.scheduling\.x-k8s\.io ' <<<"$mf_out")" 1
# The sample pods went through the stack's webhook: the GPU limit became
# Slurm GRES (samples use namespace demo, labelled slurm-bridge=enabled).
# Renamed, so that a GPU sample already running in demo does not matter.
check_eq "the webhook mutates the GPU sample (dry run)" \
	"$(sed 's/^  name: gpu-pod$/  name: t90-gpu-pod/' "$MF_DIR/samples/gpu-pod.yaml" |
		k create --dry-run=server -f - \
		-o jsonpath='{.metadata.annotations.slurmjob\.slinky\.slurm\.net/gres}' 2>&1)" "gpu:1"

scenario "manifests: least-privilege RBAC that covers what the code watches"
mf_rbac=$(mf_json "$MF_DIR"/*.yaml "$MF_DIR/admission/rbac.yaml")
# Any "*" in any Role or ClusterRole shipped here.
mf_wild=$(jq -r 'select(.kind == "Role" or .kind == "ClusterRole") | .metadata.name as $n |
	.rules[] | (.apiGroups // [], .resources // [], .verbs // [],
		.resourceNames // [], .nonResourceURLs // []) | .[] |
	select(test("\\*")) | "\($n): \(.)"' <<<"$mf_rbac")
check_eq "no wildcard in any role" "${mf_wild:-none}" none
check_eq "the scheduler's ClusterRole exists" \
	"$(jq -r 'select(.kind == "ClusterRole" and .metadata.name == "slurm-bridge") | .metadata.name' <<<"$mf_rbac")" \
	slurm-bridge

# mf_uncovered ROLE SOURCE: the collections SOURCE lists and watches (its
# "/api..." string literals) that ClusterRole ROLE does not grant both list
# and watch on, one per line.
mf_uncovered() {
	local role=$1 src=$2 path group res
	for path in $(grep -o '"/api[^"]*"' "$MF_TOP/$src" | tr -d '"'); do
		case $path in
		/api/v1/*) group='' res=${path#/api/v1/} ;;
		/apis/*/*/*) res=${path##*/}; group=${path#/apis/}; group=${group%%/*} ;;
		*) echo "$path (not a collection path)"; continue ;;
		esac
		jq -e --arg role "$role" --arg g "$group" --arg r "$res" -s '
			[.[] | select(.kind == "ClusterRole" and .metadata.name == $role) |
			 .rules[] | select((.resourceNames // []) == [] and
				any(.apiGroups[]; . == $g) and any(.resources[]; . == $r)) |
			 .verbs[]] | any(. == "list") and any(. == "watch")' \
			<<<"$mf_rbac" >/dev/null || echo "$path"
	done
}
mf_paths=$(grep -c '"/api[^"]*"' "$MF_TOP/bridge/main.c")
check "bridge/main.c watches something (found $mf_paths paths)" test "$mf_paths" -ge 5
mf_miss=$(mf_uncovered slurm-bridge bridge/main.c | paste -sd' ')
check_eq "ClusterRole slurm-bridge lists and watches every informer path of bridge/main.c" \
	"${mf_miss:-none missing}" "none missing"
mf_miss=$(mf_uncovered slurm-bridge-admission admission/owners.c | paste -sd' ')
check_eq "ClusterRole slurm-bridge-admission does the same for admission/owners.c" \
	"${mf_miss:-none missing}" "none missing"

# The names the pieces use to find each other agree.
mf_all=$(mf_json "$MF_DIR"/*.yaml "$MF_DIR/admission")
check_eq "the webhooks' Service exists in slurm-bridge with port 443" \
	"$(jq -r 'select(.kind == "Service" and .metadata.name == "slurm-bridge-admission" and
		.metadata.namespace == "slurm-bridge") | .spec.ports[] | select(.port == 443) | .targetPort' <<<"$mf_all")" \
	https
check_eq "each webhook calls that Service on 443" \
	"$(jq -r 'select(.kind | endswith("WebhookConfiguration")) | .webhooks[].clientConfig.service |
		"\(.namespace)/\(.name):\(.port)"' <<<"$mf_all" | sort -u)" \
	"slurm-bridge/slurm-bridge-admission:443"
check_eq "the webhook trusts the scheduler's service account (--bridge-user)" \
	"$(jq -r 'select(.kind == "Deployment" and .metadata.name == "slurm-bridge-admission") |
		.spec.template.spec.containers[0].args[] | select(startswith("--bridge-user="))' <<<"$mf_all")" \
	"--bridge-user=system:serviceaccount:slurm-bridge:slurm-bridge"
mf_bad=$(jq -r 'select(.kind == "Deployment") | .metadata.name as $d |
	.spec.template.spec | (.initContainers // []) + .containers | .[] |
		select((.securityContext.readOnlyRootFilesystem != true) or
			(.securityContext.allowPrivilegeEscalation != false) or
			(.securityContext.capabilities.drop != ["ALL"]) or
			(.resources.limits.cpu == null) or (.resources.limits.memory == null) or
			(.livenessProbe == null)) | "\($d)/\(.name)"' <<<"$mf_all" | paste -sd' ')
check_eq "every container: read-only root, no escalation or capabilities, limits, a probe" \
	"${mf_bad:-all do}" "all do"
check_eq "both Deployments run as their own service accounts" \
	"$(jq -r 'select(.kind == "Deployment") | "\(.metadata.name)=\(.spec.template.spec.serviceAccountName)"' <<<"$mf_all" | sort | paste -sd' ')" \
	"slurm-bridge-admission=slurm-bridge-admission slurm-bridge=slurm-bridge"

scenario "manifests: the service accounts may do what the code does, and no more"
# Authorization needs the RBAC objects stored: the service accounts and the
# scheduler's roles are created for real, only when none of them exists,
# and removed again (the namespaced ones go with the namespace).
# admission/rbac.yaml is normally there already (make bridge-up applies it).
mf_rbac_created=0
if [[ " ${mf_created[*]} " == *" slurm-bridge "* ]] &&
	! k get clusterrole slurm-bridge >/dev/null 2>&1 &&
	! k get clusterrolebinding slurm-bridge >/dev/null 2>&1; then
	k apply -f "$MF_DIR/10-serviceaccounts.yaml" -f "$MF_DIR/20-rbac-scheduler.yaml" >/dev/null &&
		mf_rbac_created=1
fi
mf_adm_created=0
if [ "$mf_rbac_created" = 1 ] && ! k get clusterrole slurm-bridge-admission >/dev/null 2>&1; then
	k apply -f "$MF_DIR/admission/rbac.yaml" >/dev/null && mf_adm_created=1
fi
# mf_can SA VERB RESOURCE [KUBECTL-ARGS...]: prints yes or no, as the
# service account with the groups every service account has.  The namespace
# is default unless the arguments name one (-n NS) or all (-A).
mf_can() {
	local sa=$1 where=(-n default)
	shift
	[[ " $* " == *" -n "* || " $* " == *" -A "* ]] && where=()
	k auth can-i "$@" "${where[@]}" --as="system:serviceaccount:slurm-bridge:$sa" \
		--as-group=system:serviceaccounts --as-group=system:serviceaccounts:slurm-bridge \
		--as-group=system:authenticated 2>/dev/null
}
# mf_can_all SA WANT "VERB RESOURCE [ARGS]"...: the requests whose answer
# is not WANT, space-separated.
mf_can_all() {
	local sa=$1 want=$2 req words bad=()
	shift 2
	for req in "$@"; do
		read -ra words <<<"$req"	# no globbing: "* *" stays as it is
		[ "$(mf_can "$sa" "${words[@]}")" = "$want" ] || bad+=("${req// /:}")
	done
	echo "${bad[*]}"
}
if [ "$mf_rbac_created" = 1 ]; then
	mf_bad=$(mf_can_all slurm-bridge yes \
		"list pods -A" "watch pods -A" "patch pods" "delete pods" \
		"patch pods --subresource=status" "create pods --subresource=binding" \
		"list nodes" "watch nodes" "patch nodes" \
		"list namespaces" "watch namespaces" \
		"list jobs.batch -A" "watch jobs.batch -A" \
		"list podgroups.scheduling.x-k8s.io -A" "watch podgroups.scheduling.x-k8s.io -A" \
		"list jobsets.jobset.x-k8s.io -A" "watch jobsets.jobset.x-k8s.io -A" \
		"list leaderworkersets.leaderworkerset.x-k8s.io -A" \
		"watch leaderworkersets.leaderworkerset.x-k8s.io -A" \
		"create events.events.k8s.io" "patch events.events.k8s.io" \
		"create leases.coordination.k8s.io -n slurm-bridge" \
		"get leases.coordination.k8s.io/slurm-bridge -n slurm-bridge" \
		"update leases.coordination.k8s.io/slurm-bridge -n slurm-bridge")
	check_eq "the scheduler may make every request its code makes" "${mf_bad:-all allowed}" "all allowed"
	mf_bad=$(mf_can_all slurm-bridge no \
		"get pods" "create pods" "update pods" "update pods --subresource=status" \
		"create pods --subresource=eviction" "get secrets" "list secrets -A" \
		"update nodes" "delete nodes" "patch nodes --subresource=status" \
		"create events" "delete events.events.k8s.io" "patch jobs.batch" \
		"create leases.coordination.k8s.io" \
		"update leases.coordination.k8s.io/other -n slurm-bridge" \
		"delete leases.coordination.k8s.io/slurm-bridge -n slurm-bridge" \
		"escalate clusterroles.rbac.authorization.k8s.io" "* *")
	check_eq "and nothing else that matters" "${mf_bad:-all refused}" "all refused"
	mf_bad=$(mf_can_all slurm-bridge-admission yes \
		"list namespaces" "watch namespaces" "list jobs.batch -A" "watch jobs.batch -A" \
		"watch jobsets.jobset.x-k8s.io -A" "watch leaderworkersets.leaderworkerset.x-k8s.io -A" \
		"watch podgroups.scheduling.x-k8s.io -A")
	check_eq "the webhook may watch what admission/owners.c watches" "${mf_bad:-all allowed}" "all allowed"
	mf_bad=$(mf_can_all slurm-bridge-admission no \
		"list pods -A" "patch pods" "get secrets" "create pods --subresource=binding" \
		"create events.events.k8s.io")
	check_eq "and never writes" "${mf_bad:-all refused}" "all refused"
	k delete -f "$MF_DIR/20-rbac-scheduler.yaml" --ignore-not-found >/dev/null
	if [ "$mf_adm_created" = 1 ]; then
		k delete -f "$MF_DIR/admission/rbac.yaml" --ignore-not-found >/dev/null
	fi
else
	echo "  skip the RBAC objects (or the namespace slurm-bridge) existed before this test"
fi

if [ ${#mf_created[@]} -gt 0 ]; then
	k delete namespace "${mf_created[@]}" --wait=true --timeout=120s >/dev/null
fi
