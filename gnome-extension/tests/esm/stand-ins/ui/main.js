// Stand-in for resource:///org/gnome/shell/ui/main.js: a panel that keeps its status area as
// the shell's does, forgetting a role when its button is destroyed.
export const panel = {
    statusArea: {},
    addToStatusArea(role, indicator) {
        if (role in this.statusArea)
            throw new Error(`Extension point conflict: there is already a status indicator for role ${role}`);
        this.statusArea[role] = indicator;
        indicator.connect('destroy', () => delete this.statusArea[role]);
        return indicator;
    },
};
