"""cedar.cli"""
