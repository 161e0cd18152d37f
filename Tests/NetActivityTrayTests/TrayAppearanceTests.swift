import NetActivity
import NetActivityTray
import Testing

/// The rules for what the item shows, without a bus.
@Suite struct TrayAppearanceTests {
    let options = TrayOptions()

    private func activity(_ id: UInt32, _ label: String, _ completed: UInt64 = 0, of total: UInt64 = 0) -> ActivityInfo {
        ActivityInfo(id: id, owner: ":1.9", label: label, completed: completed, total: total, started: 0)
    }

    @Test func idleIsPassiveWithTheIdleIcon() {
        let look = TrayAppearance(IndicatorSnapshot(), options: options)
        #expect(look.status == .passive)
        #expect(look.iconName == TrayIcons.idle)
        #expect(look.toolTip == .init(title: "Network activity", description: "Idle"))
    }

    @Test func activeButNotYetVisibleStaysPassiveAndListsTheActivity() {
        let state = IndicatorSnapshot(active: true, visible: false, count: 1, activities: [activity(1, "Sync")])
        let look = TrayAppearance(state, options: options)
        #expect(look.status == .passive)
        #expect(look.iconName == TrayIcons.idle)
        #expect(look.toolTip.description == "Sync")
    }

    @Test func visibleIsActiveWithTheActivityIcon() {
        let state = IndicatorSnapshot(active: true, visible: true, count: 1)
        let look = TrayAppearance(state, options: TrayOptions(activeIcon: "spinner", idleIcon: "dot"))
        #expect(look.status == .active)
        #expect(look.iconName == "spinner")
        #expect(look.toolTip.description == "1 other connection")
    }

    @Test func anUnavailableServiceReadsAsIdle() {
        var state = IndicatorSnapshot.unavailable
        state.visible = true
        let look = TrayAppearance(state, options: options)
        #expect(look.status == .passive)
        #expect(look.toolTip.description == "The network activity service is not running")
    }

    @Test func theTooltipListsActivitiesWithTheirPercent() {
        let state = IndicatorSnapshot(
            active: true, visible: true, count: 4, progress: 0.375,
            activities: [activity(1, "Sync feeds", 512, of: 2048), activity(2, "Backup"), activity(3, "ISO", 1, of: 2)])
        #expect(
            TrayAppearance(state, options: options).toolTip.description
                == "Sync feeds — 25%\nBackup\nISO — 50%\n1 other connection\nOverall 37%")
    }

    @Test func labelsAreEscapedForHostsThatReadMarkup() {
        let state = IndicatorSnapshot(active: true, visible: true, count: 1, activities: [activity(1, "<b>a</b> & b\nc")])
        #expect(TrayAppearance(state, options: options).toolTip.description == "&lt;b&gt;a&lt;/b&gt; &amp; b?c")
    }

    /// Labels come from any program on the bus: the tooltip follows the one rule for text
    /// (`PrintableText`), so no escape sequence, bidirectional override or invisible character
    /// reaches a host.
    @Test func hostileLabelsArePrintableInTheTooltip() {
        let labels = ["\u{9B}31mred", "\u{1B}]0;owned\u{07}", "file\u{202E}gpj.exe", "a\u{2066}b\u{200F}c\u{FEFF}"]
        let state = IndicatorSnapshot(
            active: true, visible: true, count: 4, activities: labels.enumerated().map { activity(UInt32($0.offset + 1), $0.element) })
        let description = TrayAppearance(state, options: options).toolTip.description
        #expect(description == "?31mred\n?]0;owned?\nfilegpj.exe\nabc")
    }

    @Test func onlyRealChangesAreAnnounced() {
        let idle = TrayAppearance(IndicatorSnapshot(), options: options)
        #expect(idle.changes(to: idle).isEmpty)

        let pending = TrayAppearance(
            IndicatorSnapshot(active: true, count: 1, activities: [activity(1, "Sync", 512, of: 2048)]), options: options)
        #expect(idle.changes(to: pending) == [.toolTip])

        // 512/2048 and 513/2048 both read 25%: nothing to announce.
        let sameText = TrayAppearance(
            IndicatorSnapshot(active: true, count: 1, activities: [activity(1, "Sync", 513, of: 2048)]), options: options)
        #expect(pending.changes(to: sameText).isEmpty)

        var visibleState = IndicatorSnapshot(active: true, visible: true, count: 1, activities: [activity(1, "Sync", 513, of: 2048)])
        let shown = TrayAppearance(visibleState, options: options)
        #expect(sameText.changes(to: shown) == [.status(.active), .icon])

        visibleState.visible = false
        #expect(shown.changes(to: TrayAppearance(visibleState, options: options)) == [.status(.passive), .icon])
    }

    @Test func equalIconsMeanNoNewIcon() {
        let sameIcon = TrayOptions(activeIcon: "x", idleIcon: "x")
        let idle = TrayAppearance(IndicatorSnapshot(), options: sameIcon)
        let shown = TrayAppearance(IndicatorSnapshot(active: true, visible: true, count: 1), options: sameIcon)
        #expect(idle.changes(to: shown) == [.status(.active), .toolTip])
    }

    // MARK: - The progress ring

    @Test func aKnownProgressWhileVisibleDrawsTheRingInPlaceOfTheIconName() {
        let state = IndicatorSnapshot(active: true, visible: true, count: 1, progress: 0.257)
        let look = TrayAppearance(state, options: options)
        #expect(look.ring == 25)
        #expect(look.iconName == "")
        #expect(look.status == .active)
    }

    @Test func noRingWithoutProgressWhileHiddenOrWhenTurnedOff() {
        let unknown = IndicatorSnapshot(active: true, visible: true, count: 1)
        #expect(TrayAppearance(unknown, options: options).ring == nil)
        #expect(TrayAppearance(unknown, options: options).iconName == TrayIcons.active)

        let hidden = IndicatorSnapshot(active: true, visible: false, count: 1, progress: 0.5)
        #expect(TrayAppearance(hidden, options: options).ring == nil)
        #expect(TrayAppearance(hidden, options: options).iconName == TrayIcons.idle)

        let shown = IndicatorSnapshot(active: true, visible: true, count: 1, progress: 0.5)
        let plain = TrayAppearance(shown, options: TrayOptions(progressRing: false))
        #expect(plain.ring == nil && plain.iconName == TrayIcons.active)
    }

    @Test func onlyANewWholePercentIsANewIcon() {
        func look(_ progress: Double?) -> TrayAppearance {
            TrayAppearance(IndicatorSnapshot(active: true, visible: true, count: 1, progress: progress), options: options)
        }
        #expect(look(0.250).changes(to: look(0.259)).isEmpty)
        #expect(look(0.259).changes(to: look(0.26)) == [.icon])
        #expect(look(nil).changes(to: look(0.1)) == [.icon])
        #expect(look(0.1).changes(to: look(nil)) == [.icon])
        #expect(look(0.999).ring == 99)
        #expect(look(1).ring == 100)
    }
}
