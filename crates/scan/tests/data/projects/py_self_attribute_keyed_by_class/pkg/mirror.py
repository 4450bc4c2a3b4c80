class Mirror:
    def diff(self, rev):
        return rev
