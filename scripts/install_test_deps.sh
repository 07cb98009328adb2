#!/usr/bin/env bash
# Installs what the test suite needs beyond Deno, from Debian's archive, when
# missing: nginx (tests/nginx_compat_test.ts runs it beside the gateway),
# python3 (a resetting upstream) and chromium (tests/browser_test.ts). Needs
# root, as on the project's machines.
set -euo pipefail
need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v python3 >/dev/null 2>&1 || need+=(python3)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install_test_deps: need ${need[*]} (apt-get install ${need[*]}); not root, cannot install" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Debian's nginx package starts a system nginx on port 80; the tests run
# their own, so keep the service from starting.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
rm -f /usr/sbin/policy-rc.d
