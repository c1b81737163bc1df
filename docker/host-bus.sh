# Sourced by docker/check.sh and docker/container-check.sh: the
# configuration of a D-Bus system bus as a host has it, for the checks of
# docker/dbus/blegateway.conf. It denies method calls by default (Debian's
# system.conf), carries upstream BlueZ's bluetooth.conf (only root owns and
# calls org.bluez), and includes the policy directory where a user installs
# ours. (dbus-daemon needs the DOCTYPE line: without it, it parses the file
# but drops every client at its first message.)

# host_bus_config SOCKET_PATH POLICY_DIR: prints the configuration.
host_bus_config() {
  cat << CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$1</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <policy user="root">
    <allow own="org.bluez"/>
    <allow send_destination="org.bluez"/>
    <!-- bluez-sim's control interface (docs/simulator.md), not bluetoothd's -->
    <allow own="org.blegateway.Simulator"/>
  </policy>
  <policy group="bluetooth">
    <allow send_destination="org.bluez"/>
  </policy>
  <includedir>$2</includedir>
</busconfig>
CONF
}
