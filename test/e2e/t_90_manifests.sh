# shellcheck shell=bash
# The in-cluster deployment (manifests/): every object of the plain
# manifests rendered from the chart (slurm-bridge.yaml, certs.yaml,
# admission/webhooks.yaml; make manifests-check keeps them equal to
# manifests/chart), the CRDs and the samples passes a server-side dry run
# against the stack's API server (admission, including the webhook and Pod
# Security, but nothing stored), and the RBAC the daemons get covers
# exactly what their code watches, with no wildcard.

MF_TOP=$(cd "$E2E_DIR/../.." && pwd)
MF_DIR=$MF_TOP/manifests
# What kubectl users apply, in the order docs/admins/install.md gives.
MF_FILES=("$MF_DIR/slurm-bridge.yaml" "$MF_DIR/admission/webhooks.yaml" "$MF_DIR/certs.yaml")

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
# the manifest itself, labels included; nothing else of FILE) unless it
# exists.  Prints its name when this call created it.
mf_ns_ensure() {
	local name
	name=$(mf_json "$1" | jq -r 'select(.kind == "Namespace") | .metadata.name')
	[ -n "$name" ] || return 1
	if [ "$(k get namespace "$name" -o jsonpath='{.status.phase}' 2>/dev/null)" = Terminating ]; then
		wait_for 120 mf_ns_gone "$name" || return 1
	fi
	mf_ns_gone "$name" || return 0
	mf_json "$1" | jq 'select(.kind == "Namespace")' | k apply -f - >/dev/null || return 1
	# Pods are refused until the controller-manager made the default
	# service account.
	wait_for 30 k -n "$name" get serviceaccount default || return 1
	echo "$name"
}

scenario "manifests: kubectl apply --dry-run=server of the rendered manifests, crds/ and samples/"
mf_created=()
for f in "$MF_DIR/slurm-bridge.yaml" "$MF_DIR/samples/00-namespace.yaml"; do
	if n=$(mf_ns_ensure "$f"); then
		[ -n "$n" ] && mf_created+=("$n")
	else
		fail "cannot create the namespace of ${f#"$MF_TOP"/}"
	fi
done
# Not -R -f manifests/: that would also read the chart's templates.
mf_objs=("${MF_FILES[@]}" "$MF_DIR/crds" "$MF_DIR/samples")
mf_fargs=()
for f in "${mf_objs[@]}"; do mf_fargs+=(-f "$f"); done
mf_out=$(k apply --dry-run=server -R "${mf_fargs[@]}" 2>&1)
mf_rc=$?
if [ "$mf_rc" -eq 0 ]; then
	pass "the server accepts every manifest"
else
	fail "kubectl apply --dry-run=server failed (rc $mf_rc):"
	grep -v '(server dry run)$' <<<"$mf_out" | sed 's/^/         /' | head -n 40
fi
mf_want=$(mf_json "${mf_objs[@]}" | jq -s length)
mf_got=$(grep -c '(server dry run)$' <<<"$mf_out")
check_eq "every object was dry-run applied" "$mf_got" "$mf_want"
check "no object would violate Pod Security (slurm-bridge is 'restricted'; the certificate Job too)" \
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
mf_rbac=$(mf_json "$MF_DIR/slurm-bridge.yaml" "$MF_DIR/certs.yaml")
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
		path=${path%%\?*} # a list with a selector is a list
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
mf_miss=$(for f in admission/owners.c admission/guard.c; do
	mf_uncovered slurm-bridge-admission "$f"; done | paste -sd' ')
check_eq "ClusterRole slurm-bridge-admission does the same for admission/owners.c and guard.c" \
	"${mf_miss:-none missing}" "none missing"
# mf_writes KIND NAME: the rules of that role with a verb other than list
# and watch, one per line: groups/resources/resourceNames/verbs.
mf_writes() {
	jq -r --arg k "$1" --arg n "$2" 'select(.kind == $k and .metadata.name == $n) |
		.rules[] | select(any(.verbs[]; . != "list" and . != "watch")) |
		"\(.apiGroups | join(","))/\(.resources | join(","))/\(.resourceNames // [] | join(","))/\(.verbs | join(","))"' \
		<<<"$mf_rbac"
}
check_eq "the webhook writes only caBundle of its own webhook configurations (get, patch by name)" \
	"$(mf_writes ClusterRole slurm-bridge-admission | paste -sd' ')" \
	"admissionregistration.k8s.io/mutatingwebhookconfigurations,validatingwebhookconfigurations/slurm-bridge/get,patch"
check_eq "the certificate job creates Secrets and reads and writes its four by name" \
	"$(mf_writes Role slurm-bridge-certs | paste -sd' ')" \
	"/secrets//create /secrets/slurm-bridge-ca,slurm-bridge-admission-tls,slurm-bridge-tls,slurm-bridge-extender-client/get,update,patch"

# The names the pieces use to find each other agree.
mf_all=$(mf_json "${MF_FILES[@]}")
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
check_eq "the webhook keeps caBundle of the webhook configurations its RBAC names" \
	"$(jq -r 'select(.kind == "Deployment" and .metadata.name == "slurm-bridge-admission") |
		.spec.template.spec.containers[0].args[] | select(startswith("--webhook-configuration=")) |
		ltrimstr("--webhook-configuration=")' <<<"$mf_all")" \
	"$(jq -r 'select(.kind | endswith("WebhookConfiguration")) | .metadata.name' <<<"$mf_all" | sort -u)"
check_eq "... from the ca.crt of its TLS Secret, mounted next to the serving pair" \
	"$(jq -r 'select(.kind == "Deployment" and .metadata.name == "slurm-bridge-admission") |
		.spec.template.spec.volumes[].projected.sources[]? | .secret // empty |
		"\(.name):" + ([.items[].path] | join(","))' <<<"$mf_all")" \
	"slurm-bridge-admission-tls:tls/tls.crt,tls/tls.key,tls/ca.crt"
# Both scheduler replicas are ready; the leader labels its own pod, and the
# Service (extender calls, metrics) selects that label.
check_eq "the Service slurm-bridge selects the leader's pod alone" \
	"$(jq -c 'select(.kind == "Service" and .metadata.name == "slurm-bridge") | .spec.selector' <<<"$mf_all")" \
	'{"app.kubernetes.io/name":"slurm-bridge","slurm-bridge.io/leader":"true"}'
check_eq "the scheduler knows its pod's name, which the leader labels (POD_NAME)" \
	"$(jq -r 'select(.kind == "Deployment" and .metadata.name == "slurm-bridge") |
		.spec.template.spec.containers[] | select(.name == "slurm-bridge") | .env[] |
		select(.name == "POD_NAME") | .valueFrom.fieldRef.fieldPath' <<<"$mf_all")" \
	metadata.name
# Both daemons listen on every interface of their pod (their default is
# loopback), and a NetworkPolicy lets in that one port.
check_eq "each Deployment listens on every interface of its pod (--listen=:PORT)" \
	"$(jq -r 'select(.kind == "Deployment") | .metadata.name + " " +
		(.spec.template.spec.containers[].args[]? | select(startswith("--listen=")))' <<<"$mf_all" |
		LC_ALL=C sort | paste -sd,)" \
	"slurm-bridge --listen=:8443,slurm-bridge-admission --listen=:9443"
check_eq "a NetworkPolicy selects each one's pods and lets in its port" \
	"$(jq -r 'select(.kind == "NetworkPolicy") | .spec.podSelector.matchLabels["app.kubernetes.io/name"] +
		":" + (.spec.ingress[].ports[].port | tostring)' <<<"$mf_all" | LC_ALL=C sort | paste -sd,)" \
	"slurm-bridge-admission:9443,slurm-bridge:8443"
check_eq "the extender API answers only the extender's client certificate (--client-name)" \
	"$(jq -r 'select(.kind == "Deployment" and .metadata.name == "slurm-bridge") |
		.spec.template.spec.containers[].args[]? | select(startswith("--client-name="))' <<<"$mf_all")" \
	"--client-name=slurm-bridge-extender-client"
mf_bad=$(jq -r 'select(.kind == "Deployment" or .kind == "Job") | .kind as $k | .metadata.name as $d |
	.spec.template.spec | (.initContainers // []) + .containers | .[] |
		select((.securityContext.readOnlyRootFilesystem != true) or
			(.securityContext.allowPrivilegeEscalation != false) or
			(.securityContext.capabilities.drop != ["ALL"]) or
			(.resources.limits.cpu == null) or (.resources.limits.memory == null) or
			(.livenessProbe == null and $k == "Deployment")) | "\($d)/\(.name)"' <<<"$mf_all" | paste -sd' ')
check_eq "every container: read-only root, no escalation or capabilities, limits, a probe (Deployments)" \
	"${mf_bad:-all do}" "all do"
check_eq "both Deployments and the certificate Job run as their own service accounts" \
	"$(jq -r 'select(.kind == "Deployment" or .kind == "Job") | "\(.metadata.name)=\(.spec.template.spec.serviceAccountName)"' <<<"$mf_all" | sort | paste -sd' ')" \
	"slurm-bridge-admission=slurm-bridge-admission slurm-bridge-certs=slurm-bridge-certs slurm-bridge=slurm-bridge"

scenario "manifests: the service accounts may do what the code does, and no more"
# Authorization needs the RBAC objects stored: the service accounts, the
# scheduler's roles and the certificate job's Role are created for real
# (from slurm-bridge.yaml and certs.yaml), only when none of them exists,
# and removed again (the namespaced ones go with the namespace).  The
# webhook's ClusterRole and binding are normally there already (make
# bridge-up applies them from slurm-bridge.yaml).
# mf_rbac_objs JQ-FILTER: the ServiceAccounts and RBAC objects of the two
# files that pass JQ-FILTER, as a JSON stream for kubectl -f -.
mf_rbac_objs() {
	jq -c "select(.kind | test(\"^(ServiceAccount|ClusterRole|ClusterRoleBinding|Role|RoleBinding)\$\")) | $1" \
		<<<"$mf_rbac"
}
mf_adm_filter='select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and .metadata.name == "slurm-bridge-admission")'
mf_rest_filter='select(((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and .metadata.name == "slurm-bridge-admission") | not)'
mf_rbac_created=0
if [[ " ${mf_created[*]} " == *" slurm-bridge "* ]] &&
	! k get clusterrole slurm-bridge >/dev/null 2>&1 &&
	! k get clusterrolebinding slurm-bridge >/dev/null 2>&1; then
	mf_rbac_objs "$mf_rest_filter" | k apply -f - >/dev/null && mf_rbac_created=1
fi
mf_adm_created=0
if [ "$mf_rbac_created" = 1 ] && ! k get clusterrole slurm-bridge-admission >/dev/null 2>&1; then
	mf_rbac_objs "$mf_adm_filter" | k apply -f - >/dev/null && mf_adm_created=1
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
		"list nodes" "watch nodes" "get nodes" "patch nodes" \
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
		"watch podgroups.scheduling.x-k8s.io -A" "list nodes" "watch nodes" \
		"get mutatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge" \
		"patch mutatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge" \
		"get validatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge" \
		"patch validatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge")
	check_eq "the webhook may watch what admission/owners.c and guard.c watch, and patch its caBundle" \
		"${mf_bad:-all allowed}" "all allowed"
	mf_bad=$(mf_can_all slurm-bridge-admission no \
		"list pods -A" "patch pods" "get secrets" "create pods --subresource=binding" \
		"create events.events.k8s.io" \
		"list mutatingwebhookconfigurations.admissionregistration.k8s.io" \
		"create validatingwebhookconfigurations.admissionregistration.k8s.io" \
		"update validatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge" \
		"delete mutatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge" \
		"patch mutatingwebhookconfigurations.admissionregistration.k8s.io/other" \
		"patch validatingwebhookconfigurations.admissionregistration.k8s.io/other")
	check_eq "and writes nothing else" "${mf_bad:-all refused}" "all refused"
	mf_bad=$(mf_can_all slurm-bridge-certs yes \
		"create secrets -n slurm-bridge" \
		"get secrets/slurm-bridge-ca -n slurm-bridge" "update secrets/slurm-bridge-ca -n slurm-bridge" \
		"get secrets/slurm-bridge-admission-tls -n slurm-bridge" \
		"patch secrets/slurm-bridge-admission-tls -n slurm-bridge" \
		"update secrets/slurm-bridge-tls -n slurm-bridge" \
		"patch secrets/slurm-bridge-extender-client -n slurm-bridge")
	check_eq "the certificate job may make and rotate its four Secrets" "${mf_bad:-all allowed}" "all allowed"
	mf_bad=$(mf_can_all slurm-bridge-certs no \
		"get secrets/slurm-bridge-munge -n slurm-bridge" "list secrets -n slurm-bridge" \
		"watch secrets -n slurm-bridge" "delete secrets/slurm-bridge-ca -n slurm-bridge" \
		"get secrets/slurm-bridge-ca -n default" "create secrets -n default" \
		"list pods -A" "patch mutatingwebhookconfigurations.admissionregistration.k8s.io/slurm-bridge")
	check_eq "and nothing else" "${mf_bad:-all refused}" "all refused"
	mf_rbac_objs "$mf_rest_filter" | k delete -f - --ignore-not-found >/dev/null
	if [ "$mf_adm_created" = 1 ]; then
		mf_rbac_objs "$mf_adm_filter" | k delete -f - --ignore-not-found >/dev/null
	fi
else
	echo "  skip the RBAC objects (or the namespace slurm-bridge) existed before this test"
fi

if [ ${#mf_created[@]} -gt 0 ]; then
	k delete namespace "${mf_created[@]}" --wait=true --timeout=120s >/dev/null
fi
