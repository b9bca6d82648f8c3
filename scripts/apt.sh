# Sourced by scripts/bootstrap.sh and scripts/kafka-setup.sh: install Debian packages with
# apt-get (sudo when not root). apt_install MISSING_MESSAGE PACKAGE... returns 1, after
# saying MISSING_MESSAGE, where apt-get is not available.
apt_install() {
  local missing="$1"
  shift
  if ! command -v apt-get >/dev/null 2>&1; then
    say "$missing"
    return 1
  fi
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  say "installing $* via apt-get"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
