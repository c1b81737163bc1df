extension ObjectServer {
    /// The introspection XML of `path`: its interfaces (with the standard
    /// ones) and its child nodes. A path with no object but with objects
    /// beneath it is a plain node with children.
    func introspect(_ path: ObjectPath) throws(DBusError) -> String {
        let snapshot = state.withLock { state -> (Object?, Bool, [String]) in
            var children = Set<String>()
            for other in state.objects.keys.map(\.rawValue) + state.managers.map(\.rawValue) {
                let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
                guard other.hasPrefix(prefix), other.count > prefix.count else { continue }
                let rest = other.dropFirst(prefix.count)
                children.insert(String(rest.prefix { $0 != "/" }))
            }
            return (state.objects[path], state.managers.contains(path), children.sorted())
        }
        let (object, isManager, children) = snapshot
        guard object != nil || isManager || !children.isEmpty || path == .root else {
            throw DBusError(.unknownObject, "No such object path '\(path)'")
        }
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
            "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        xml += Self.standardInterfacesXML(hasProperties: object != nil, isManager: isManager)
        for entry in object?.interfaces ?? [] {
            xml += Self.xml(for: entry.interface)
        }
        for child in children {
            xml += "  <node name=\"\(child)\"/>\n"
        }
        xml += "</node>\n"
        return xml
    }

    private static func argumentXML(_ argument: ExportedInterface.Argument, direction: String?) -> String {
        let directionAttribute = direction.map { " direction=\"\($0)\"" } ?? ""
        return "      <arg name=\"\(escape(argument.name))\" type=\"\(argument.type.signature)\"\(directionAttribute)/>\n"
    }

    private static func xml(for interface: ExportedInterface) -> String {
        var xml = "  <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            xml += "    <method name=\"\(method.name)\">\n"
            for input in method.inputs { xml += argumentXML(input, direction: "in") }
            for output in method.outputs { xml += argumentXML(output, direction: "out") }
            xml += "    </method>\n"
        }
        for signal in interface.signals {
            xml += "    <signal name=\"\(signal.name)\">\n"
            for argument in signal.arguments { xml += argumentXML(argument, direction: nil) }
            xml += "    </signal>\n"
        }
        for property in interface.properties {
            let access =
                switch property.access {
                case .read: "read"
                case .write: "write"
                case .readWrite: "readwrite"
                }
            let annotation: String? =
                switch property.changeSignal {
                case .emitsValue: nil
                case .invalidates: "invalidates"
                case .none: "false"
                }
            if let annotation {
                xml += "    <property name=\"\(escape(property.name))\" type=\"\(property.type.signature)\" access=\"\(access)\">\n"
                xml += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"\(annotation)\"/>\n"
                xml += "    </property>\n"
            } else {
                xml += "    <property name=\"\(escape(property.name))\" type=\"\(property.type.signature)\" access=\"\(access)\"/>\n"
            }
        }
        xml += "  </interface>\n"
        return xml
    }

    private static func standardInterfacesXML(hasProperties: Bool, isManager: Bool) -> String {
        var xml = """
              <interface name="org.freedesktop.DBus.Introspectable">
                <method name="Introspect">
                  <arg name="xml" type="s" direction="out"/>
                </method>
              </interface>
              <interface name="org.freedesktop.DBus.Peer">
                <method name="Ping"/>
                <method name="GetMachineId">
                  <arg name="machine_uuid" type="s" direction="out"/>
                </method>
              </interface>

            """
        if hasProperties {
            xml += """
                  <interface name="org.freedesktop.DBus.Properties">
                    <method name="Get">
                      <arg name="interface_name" type="s" direction="in"/>
                      <arg name="property_name" type="s" direction="in"/>
                      <arg name="value" type="v" direction="out"/>
                    </method>
                    <method name="GetAll">
                      <arg name="interface_name" type="s" direction="in"/>
                      <arg name="props" type="a{sv}" direction="out"/>
                    </method>
                    <method name="Set">
                      <arg name="interface_name" type="s" direction="in"/>
                      <arg name="property_name" type="s" direction="in"/>
                      <arg name="value" type="v" direction="in"/>
                    </method>
                    <signal name="PropertiesChanged">
                      <arg name="interface_name" type="s"/>
                      <arg name="changed_properties" type="a{sv}"/>
                      <arg name="invalidated_properties" type="as"/>
                    </signal>
                  </interface>

                """
        }
        if isManager {
            xml += """
                  <interface name="org.freedesktop.DBus.ObjectManager">
                    <method name="GetManagedObjects">
                      <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
                    </method>
                    <signal name="InterfacesAdded">
                      <arg name="object" type="o"/>
                      <arg name="interfaces" type="a{sa{sv}}"/>
                    </signal>
                    <signal name="InterfacesRemoved">
                      <arg name="object" type="o"/>
                      <arg name="interfaces" type="as"/>
                    </signal>
                  </interface>

                """
        }
        return xml
    }

    private static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing("\"", with: "&quot;")
            .replacing(">", with: "&gt;")
    }
}
