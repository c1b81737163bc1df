import ArgumentParser

extension ServeOption {
    /// The option's help with its environment variable added, as
    /// `serve --help` shows it.
    func help(_ help: ArgumentHelp) -> ArgumentHelp {
        guard let variable = environmentVariable else { return help }
        var help = help
        switch kind {
        case .value: help.abstract += " [\(variable)]"
        case .list: help.abstract += " [\(variable), comma-separated]"
        case .flag: help.abstract += " [\(variable)=1]"
        case .invertibleFlag: help.abstract += " [\(variable)=1 or 0]"
        }
        return help
    }
}

// `@Option(.listen, help: …) var listen = "127.0.0.1:8080"`: a property of
// `serve` declared with its `ServeOption`, which names it.

extension Option where Value: ExpressibleByArgument {
    init(wrappedValue: Value, _ option: ServeOption, help: ArgumentHelp) {
        self.init(wrappedValue: wrappedValue, name: .customLong(option.rawValue), help: option.help(help))
    }
}

extension Option {
    init<Wrapped: ExpressibleByArgument>(_ option: ServeOption, help: ArgumentHelp) where Value == Wrapped? {
        self.init(name: .customLong(option.rawValue), help: option.help(help))
    }

    init<Element: ExpressibleByArgument>(wrappedValue: [Element], _ option: ServeOption, help: ArgumentHelp)
    where Value == [Element] {
        self.init(wrappedValue: wrappedValue, name: .customLong(option.rawValue), help: option.help(help))
    }
}

extension Flag where Value == Bool {
    init(wrappedValue: Bool, _ option: ServeOption, help: ArgumentHelp) {
        if case .invertibleFlag = option.kind {
            self.init(wrappedValue: wrappedValue, name: .customLong(option.rawValue), inversion: .prefixedNo, help: option.help(help))
        } else {
            self.init(wrappedValue: wrappedValue, name: .customLong(option.rawValue), help: option.help(help))
        }
    }
}
