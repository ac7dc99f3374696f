#!/usr/bin/env bash
# deploy/render.sh NODE: writes the configuration of one database machine
# (NODE is 1, 2 or 3) from cluster.env into out/<name>/:
#   etcd.conf.yml     -> /etc/etcd/etcd.conf.yml
#   patroni.yml       -> /etc/patroni/patroni.yml
# and out/haproxy.cfg -> /etc/haproxy/haproxy.cfg (the same on every machine
# that runs haproxy). See docs/operations.md, "High availability: setup".
set -euo pipefail
cd "$(dirname "$0")"
node=${1:?usage: deploy/render.sh 1|2|3}
set -a
# shellcheck source=cluster.env
. ./cluster.env
set +a
name_var=NODE${node}_NAME ip_var=NODE${node}_IP
export NODE_NAME=${!name_var} NODE_IP=${!ip_var}
export INITIAL_CLUSTER="$NODE1_NAME=http://$NODE1_IP:2380,$NODE2_NAME=http://$NODE2_IP:2380,$NODE3_NAME=http://$NODE3_IP:2380"
export ETCD_HOSTS="$NODE1_IP:2379,$NODE2_IP:2379,$NODE3_IP:2379"
out=out/$NODE_NAME
mkdir -p "$out"
envsubst < etcd/etcd.conf.yml.in > "$out/etcd.conf.yml"
envsubst < patroni/patroni.yml.in > "$out/patroni.yml"
envsubst < haproxy/haproxy.cfg.in > out/haproxy.cfg
chmod 600 "$out/patroni.yml"
echo "wrote $out/etcd.conf.yml $out/patroni.yml out/haproxy.cfg"
