"""cedar.server"""
