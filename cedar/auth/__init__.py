"""cedar.auth"""
